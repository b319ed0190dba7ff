package formats_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/chatgpt"
	"weft/formats/internal/importtest"
)

func TestDetectTestdata(t *testing.T) {
	want := map[string]formats.Format{
		"claude-code":     formats.ClaudeCode,
		"chatgpt-export":  formats.ChatGPT,
		"codex-rollout":   formats.Codex,
		"openai-messages": formats.OpenAI,
		"sharegpt":        formats.ShareGPT,
	}
	for dir, f := range want {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		if len(files) == 0 {
			t.Fatalf("no files in %s", dir)
		}
		for _, path := range files {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := formats.Detect(b[:min(len(b), formats.DetectSize)])
			if err != nil || got != f {
				t.Errorf("%s: %s (%v), want %s", path, got, err, f)
			}
		}
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want formats.Format
		err  string
	}{
		{`{"weft":1,"type":"session"}`, formats.Weft, ""},
		{`[{"role":"user","content":"hi"}]`, formats.OpenAI, ""},
		{`{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":"yo"}`, formats.OpenAI, ""},
		{`{"messages":[{"role":"user","content":"hi"}]}`, formats.OpenAI, ""},
		{`{"conversations":[{"from":"human","value":"hi"}]}`, formats.ShareGPT, ""},
		{`{"type":"summary","summary":"x","leafUuid":"u"}`, formats.ClaudeCode, ""},
		{"\xef\xbb\xbf" + `{"type":"progress","uuid":"u"}`, formats.ClaudeCode, ""},
		{`[{"title":"t","mapping":{"a":{"id":"a","message":null}}`, formats.ChatGPT, ""}, // cut short: still told
		{``, "", "empty"},
		{"\x00\x01binary", "", "not JSON"},
		{`{"foo":1,"bar":2}`, "", "keys bar, foo"},
		{`[1,2,3]`, "", "no JSON object"},
	}
	for _, tt := range tests {
		got, err := formats.Detect([]byte(tt.in))
		if tt.err != "" {
			if !errors.Is(err, formats.ErrUnknownFormat) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Detect(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %s (%v), want %s", tt.in, got, err, tt.want)
		}
	}
}

// A first record that is cut off or broken does not decide the format:
// the records after it do, as the importers skip such a record too.
func TestDetectSkipsUnreadableLeadingRecords(t *testing.T) {
	cc := importtest.File(t, "testdata/claude-code/spotter_long_session.jsonl")
	firstLine, rest, _ := bytes.Cut(cc, []byte("\n"))
	for _, n := range []int{1, 5, 20, 60} {
		// the first line cut after n bytes, as a crash mid-write leaves it
		data := append(append(append([]byte(nil), firstLine[:n]...), '\n'), rest...)
		got, err := formats.Detect(data[:min(len(data), formats.DetectSize)])
		if err != nil || got != formats.ClaudeCode {
			t.Errorf("first line cut at %d bytes: %s (%v), want claude-code", n, got, err)
		}
		// the tail of a record, as a file cut at its start leaves it
		data = append(append([]byte(nil), firstLine[len(firstLine)-n:]...), cc[len(firstLine):]...)
		if got, err := formats.Detect(data[:min(len(data), formats.DetectSize)]); err != nil || got != formats.ClaudeCode {
			t.Errorf("first line's last %d bytes only: %s (%v), want claude-code", n, got, err)
		}
	}

	// A ChatGPT export whose list starts with null: told and imported.
	cg := importtest.File(t, "testdata/chatgpt-export/chatgpt2graph_conversations.json")
	i := bytes.IndexByte(cg, '[')
	withNull := append(append(append([]byte(nil), cg[:i+1]...), "null, "...), cg[i+1:]...)
	if got, err := formats.Detect(withNull); err != nil || got != formats.ChatGPT {
		t.Fatalf("ChatGPT list starting with null: %s (%v)", got, err)
	}
	rec, problems := importtest.RunOK(t, chatgpt.Read, string(withNull))
	if len(rec.Threads) != 1 || len(rec.Threads[0].Messages) != 42 || len(problems) != 1 {
		t.Errorf("ChatGPT list starting with null: %d threads, problems %v", len(rec.Threads), problems)
	}

	for _, tt := range []struct {
		in   string
		want formats.Format
	}{
		{"{broken\n" + `{"role":"user","content":"hi"}`, formats.OpenAI},
		{`{"foo":1}` + "\n" + `{"conversations":[]}`, formats.ShareGPT},
		{`[{"foo":1},{"mapping":{}}]`, formats.ChatGPT},
		{`[null,1,"x",{"conversations":[]}]`, formats.ShareGPT},
	} {
		if got, err := formats.Detect([]byte(tt.in)); err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %s (%v), want %s", tt.in, got, err, tt.want)
		}
	}
	// Nested objects of a pretty-printed document are not records.
	if _, err := formats.Detect([]byte("{\n  \"foo\": [\n    {\"role\":\"user\",\"content\":\"hi\"}\n  ]\n}")); err == nil {
		t.Errorf("an indented nested object decided the format")
	}
}
