package formats

import (
	"bytes"
	"testing"
)

// A first record that is cut off or broken does not decide the format:
// the records after it do, as the importers skip such a record too.
func TestDetectSkipsUnreadableLeadingRecords(t *testing.T) {
	cc := cgFile(t, "testdata/claude-code/spotter_long_session.jsonl")
	firstLine, rest, _ := bytes.Cut(cc, []byte("\n"))
	for _, n := range []int{1, 5, 20, 60} {
		// the first line cut after n bytes, as a crash mid-write leaves it
		data := append(append(append([]byte(nil), firstLine[:n]...), '\n'), rest...)
		got, err := Detect(data[:min(len(data), DetectSize)])
		if err != nil || got != ClaudeCode {
			t.Errorf("first line cut at %d bytes: %s (%v), want claude-code", n, got, err)
		}
		// the tail of a record, as a file cut at its start leaves it
		data = append(append([]byte(nil), firstLine[len(firstLine)-n:]...), cc[len(firstLine):]...)
		if got, err := Detect(data[:min(len(data), DetectSize)]); err != nil || got != ClaudeCode {
			t.Errorf("first line's last %d bytes only: %s (%v), want claude-code", n, got, err)
		}
	}

	// A ChatGPT export whose list starts with null: told and imported.
	cg := cgFile(t, "testdata/chatgpt-export/chatgpt2graph_conversations.json")
	i := bytes.IndexByte(cg, '[')
	withNull := append(append(append([]byte(nil), cg[:i+1]...), "null, "...), cg[i+1:]...)
	if got, err := Detect(withNull); err != nil || got != ChatGPT {
		t.Fatalf("ChatGPT list starting with null: %s (%v)", got, err)
	}
	rec, problems := cgReadOK(t, string(withNull))
	if len(rec.threads) != 1 || len(rec.threads[0].Messages) != 42 || len(problems) != 1 {
		t.Errorf("ChatGPT list starting with null: %d threads, problems %v", len(rec.threads), problems)
	}

	for _, tt := range []struct {
		in   string
		want Format
	}{
		{"{broken\n" + `{"role":"user","content":"hi"}`, OpenAI},
		{`{"foo":1}` + "\n" + `{"conversations":[]}`, ShareGPT},
		{`[{"foo":1},{"mapping":{}}]`, ChatGPT},
		{`[null,1,"x",{"conversations":[]}]`, ShareGPT},
	} {
		if got, err := Detect([]byte(tt.in)); err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %s (%v), want %s", tt.in, got, err, tt.want)
		}
	}
	// Nested objects of a pretty-printed document are not records.
	if _, err := Detect([]byte("{\n  \"foo\": [\n    {\"role\":\"user\",\"content\":\"hi\"}\n  ]\n}")); err == nil {
		t.Errorf("an indented nested object decided the format")
	}
}
