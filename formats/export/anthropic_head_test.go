package export

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"weft/formats"
)

// anPartJSON is the messages list an export from a head sends: the
// head's, then the body's.
func anPartJSON(t testing.TB, part AnthropicPart) string {
	t.Helper()
	out := []byte{'['}
	if part.Head != nil {
		out = append(out, part.Head.JSON()...)
	}
	for k := range part.Body.Messages {
		if len(out) > 1 {
			out = append(out, ',')
		}
		var err error
		if out, err = AppendJSON(out, &part.Body.Messages[k]); err != nil {
			t.Fatal(err)
		}
	}
	return string(append(out, ']'))
}

// anSameAsWhole checks that an export from a head says what the whole
// thread's export says, byte for byte.
func anSameAsWhole(t *testing.T, what string, items []formats.Item, o AnthropicOptions, part AnthropicPart) {
	t.Helper()
	body, rep := AnthropicWith(items, o)
	want, err := AppendJSON(nil, body.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if got := anPartJSON(t, part); got != string(want) {
		t.Fatalf("%s: messages\n%s\nwant\n%s", what, got, want)
	}
	if part.Body.System != body.System {
		t.Fatalf("%s: system %q, want %q", what, part.Body.System, body.System)
	}
	if !slices.Equal(part.Report.Folded, rep.Folded) {
		t.Fatalf("%s: report\n%q\nwant\n%q", what, part.Report.Folded, rep.Folded)
	}
	if part.Head != nil {
		// The head's messages are those its JSON holds, each in its span.
		all := append(slices.Clone(part.Head.Messages()), part.Body.Messages...)
		if got, err := AppendJSON(nil, all); err != nil || string(got) != string(want) {
			t.Fatalf("%s: the head's messages and those after it\n%s\nwant\n%s", what, got, want)
		}
		for k := range part.Head.Messages() {
			start, end := part.Head.Span(k)
			if m, _ := AppendJSON(nil, &part.Head.Messages()[k]); string(m) != string(part.Head.JSON()[start:end]) {
				t.Fatalf("%s: message %d of the head is %s where it lies, want %s", what, k, part.Head.JSON()[start:end], m)
			}
		}
	}
}

// A thread exported from a head is the thread exported whole, whatever
// goes on from the head: the same thread grown, or other items after
// the head's (tool calls and results whose IDs the head's have, calls
// without IDs, system turns, results whose call the head holds), with
// heads made from heads.
func TestAnthropicFromIsTheWholeExport(t *testing.T) {
	resumed, refused := 0, 0
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		o := AnthropicOptions{SystemTurns: seed%2 == 0}
		var items []formats.Item
		for len(items) < 40 {
			items = append(items, exRandomThread(r)...)
		}
		limit := r.IntN(len(items) + 1)
		part, ok := AnthropicFrom(nil, items, o, limit, 1)
		if !ok {
			t.Fatalf("seed %d: an export without a head refused", seed)
		}
		anSameAsWhole(t, fmt.Sprintf("seed %d, whole", seed), items, o, part)
		head := part.Head
		for round := 0; head != nil && round < 6; round++ {
			if head.Items() > limit {
				t.Fatalf("seed %d: a head of %d items, past the limit %d", seed, head.Items(), limit)
			}
			next := slices.Clone(items[:head.Items()])
			switch r.IntN(3) {
			case 0: // the thread goes on
				next = append(next, items[head.Items():]...)
				next = append(next, exRandomThread(r)...)
			case 1: // other items after the head
				next = append(next, exRandomThread(r)...)
			default: // the head's own items again, and a few more
				next = append(next, items[r.IntN(head.Items()):]...)
			}
			items = next
			limit = head.Items() + r.IntN(len(items)-head.Items()+1)
			part, ok = AnthropicFrom(head, items[head.Items():], o, limit, r.IntN(8))
			what := fmt.Sprintf("seed %d, round %d", seed, round)
			if !ok {
				refused++
				part, _ = AnthropicFrom(nil, items, o, limit, 1)
				anSameAsWhole(t, what+", whole again", items, o, part)
				head = part.Head
				continue
			}
			resumed++
			anSameAsWhole(t, what, items, o, part)
			if part.Head != head && part.Head.Items() < head.Items() {
				t.Fatalf("%s: the head shrank from %d items to %d", what, head.Items(), part.Head.Items())
			}
			head = part.Head
		}
	}
	t.Logf("%d exports from a head, %d refused", resumed, refused)
	if resumed < 200 {
		t.Errorf("only %d exports went on from a head", resumed)
	}
}

// A head is made only where the thread is the same whatever follows:
// none for a thread with no user message before an assistant one, or
// past the limit; and an export with other options does not go on from
// one.
func TestAnthropicHeadCuts(t *testing.T) {
	user := exItem("m1", "user", "Find the bug.")
	asst := exItem("m2", "assistant", "Found it.")
	more := exItem("m3", "user", "Fix it.")
	if part, _ := AnthropicFrom(nil, []formats.Item{user, more}, AnthropicOptions{}, 2, 1); part.Head != nil {
		t.Errorf("a head in a thread of user messages: %s", part.Head.JSON())
	}
	if part, _ := AnthropicFrom(nil, []formats.Item{user, asst, more}, AnthropicOptions{}, 0, 1); part.Head != nil {
		t.Errorf("a head past the limit: %s", part.Head.JSON())
	}
	part, _ := AnthropicFrom(nil, []formats.Item{user, asst, more}, AnthropicOptions{}, 3, 1)
	if part.Head == nil || part.Head.Items() != 1 || string(part.Head.JSON()) != `{"role":"user","content":[{"type":"text","text":"Find the bug."}]}` || len(part.Body.Messages) != 2 {
		t.Fatalf("head %+v, after it %+v", part.Head, part.Body.Messages)
	}
	if _, ok := AnthropicFrom(part.Head, []formats.Item{asst, more}, AnthropicOptions{SystemTurns: true}, 3, 1); ok {
		t.Error("an export with other options went on from the head")
	}
	if _, ok := AnthropicFrom(part.Head, []formats.Item{more}, AnthropicOptions{}, 3, 1); ok {
		t.Error("a user message after the head's went on from it")
	}
}

// A call without an ID gets a generated one that no call of the thread
// has, later ones included: a head whose call got one does not go on
// when a call after it has that ID as its own.
func TestAnthropicHeadGeneratedIDs(t *testing.T) {
	head := []formats.Item{
		exItem("m1", "user", "List the files."),
		exItem("m2", "assistant", "", exCall("", "Bash", `{"command":"ls"}`)),
		exItem("m3", "user", "", exResult("", "a.go")),
	}
	asst := exItem("m4", "assistant", "Listing again.")
	part, _ := AnthropicFrom(nil, append(slices.Clone(head), asst), AnthropicOptions{}, len(head), 1)
	if part.Head == nil || part.Head.Items() != len(head) {
		t.Fatalf("head %+v", part.Head)
	}
	// The generated ID the head's call got is now a later call's own.
	var generated string
	body, _ := AnthropicWith(head, AnthropicOptions{})
	for _, b := range body.Messages[1].Content {
		generated = b.ID
	}
	tail := []formats.Item{
		exItem("m4", "assistant", "", exCall(generated, "Bash", `{"command":"ls -l"}`)),
		exItem("m5", "user", "", exResult(generated, "a.go 10")),
	}
	if _, ok := AnthropicFrom(part.Head, tail, AnthropicOptions{}, 0, 1); ok {
		t.Errorf("went on from a head whose generated call ID %q a later call has", generated)
	}
	all := append(slices.Clone(head), tail...)
	whole, _ := AnthropicFrom(nil, all, AnthropicOptions{}, 0, 1)
	anSameAsWhole(t, "whole", all, AnthropicOptions{}, whole)
}
