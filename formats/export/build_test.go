package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"weft/formats"
)

// The builders give the values the writers write: the same document,
// the same report.
func TestBuildersAreWhatIsWritten(t *testing.T) {
	threads := map[string][]formats.Item{}
	for name, items := range exFixtures {
		threads[name] = items
	}
	for seed := range uint64(200) {
		threads[fmt.Sprintf("random %d", seed)] = exRandomThread(rand.New(rand.NewPCG(seed, 1)))
	}
	for name, items := range threads {
		var oa bytes.Buffer
		wrep, err := WriteOpenAI(&oa, items)
		if err != nil {
			t.Fatal(err)
		}
		msgs, rep := OpenAI(items)
		built, err := json.Marshal(map[string]any{"messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		exJSONEqual(t, name+": openai", oa.Bytes(), string(built))
		if !slices.Equal(rep.Folded, wrep.Folded) {
			t.Errorf("%s: openai reports differ:\n%q\n%q", name, rep.Folded, wrep.Folded)
		}

		var an bytes.Buffer
		wrep, err = WriteAnthropic(&an, items)
		if err != nil {
			t.Fatal(err)
		}
		body, rep := Anthropic(items)
		built, err = json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		exJSONEqual(t, name+": anthropic", an.Bytes(), string(built))
		if !slices.Equal(rep.Folded, wrep.Folded) {
			t.Errorf("%s: anthropic reports differ:\n%q\n%q", name, rep.Folded, wrep.Folded)
		}
		if t.Failed() {
			t.Fatalf("%s", name)
		}
	}
}

// A built message's content is one of the types its doc names, and its
// own (the writers reuse theirs).
func TestBuildersContentTypes(t *testing.T) {
	for seed := range uint64(50) {
		items := exRandomThread(rand.New(rand.NewPCG(seed, 1)))
		msgs, _ := OpenAI(items)
		for _, m := range msgs {
			switch m.Content.(type) {
			case nil, string, []OpenAIPart:
			default:
				t.Fatalf("seed %d: content of type %T", seed, m.Content)
			}
		}
		body, _ := Anthropic(items)
		for _, m := range body.Messages {
			for _, b := range m.Content {
				switch b.Content.(type) {
				case nil, string, []AnthropicBlock:
				default:
					t.Fatalf("seed %d: tool_result content of type %T", seed, b.Content)
				}
			}
		}
	}
}
