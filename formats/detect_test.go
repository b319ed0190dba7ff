package formats

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetectTestdata(t *testing.T) {
	want := map[string]Format{
		"claude-code":     ClaudeCode,
		"chatgpt-export":  ChatGPT,
		"codex-rollout":   Codex,
		"openai-messages": OpenAI,
		"sharegpt":        ShareGPT,
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
			got, err := Detect(b[:min(len(b), DetectSize)])
			if err != nil || got != f {
				t.Errorf("%s: %s (%v), want %s", path, got, err, f)
			}
		}
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want Format
		err  string
	}{
		{`{"weft":1,"type":"session"}`, Weft, ""},
		{`[{"role":"user","content":"hi"}]`, OpenAI, ""},
		{`{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":"yo"}`, OpenAI, ""},
		{`{"messages":[{"role":"user","content":"hi"}]}`, OpenAI, ""},
		{`{"conversations":[{"from":"human","value":"hi"}]}`, ShareGPT, ""},
		{`{"type":"summary","summary":"x","leafUuid":"u"}`, ClaudeCode, ""},
		{"\xef\xbb\xbf" + `{"type":"progress","uuid":"u"}`, ClaudeCode, ""},
		{`[{"title":"t","mapping":{"a":{"id":"a","message":null}}`, ChatGPT, ""}, // cut short: still told
		{``, "", "empty"},
		{"\x00\x01binary", "", "not JSON"},
		{`{"foo":1,"bar":2}`, "", "keys bar, foo"},
		{`[1,2,3]`, "", "no JSON object"},
	}
	for _, tt := range tests {
		got, err := Detect([]byte(tt.in))
		if tt.err != "" {
			if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Detect(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %s (%v), want %s", tt.in, got, err, tt.want)
		}
	}
}
