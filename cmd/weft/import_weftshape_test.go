package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// weft's own {"messages": [...]} shape, as append_messages takes it,
// imports whole: a message of tool-call parts alone is kept, and every
// message keeps its created_at.
func TestImportWeftMessagesShape(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "thread.json")
	if err := os.WriteFile(src, []byte(`{"messages": [
  {"role": "user", "content": "find x", "created_at": "2025-03-01T10:00:00Z"},
  {"role": "assistant", "content": "", "parts": [{"type": "tool_call", "tool_call_id": "c1", "tool_name": "grep", "input": {"q": "x"}}], "created_at": "2025-03-01T10:00:05Z"},
  {"role": "tool", "name": "grep", "content": "found x", "parts": [{"type": "tool_result", "tool_call_id": "c1", "text": "found x"}], "created_at": "2025-03-01T10:00:06Z"},
  {"role": "assistant", "content": "x is in a.go", "created_at": "2025-03-01T10:00:09Z"}
]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "weft.db")
	out, errOut, code, err := runCLI(db, "import", src)
	if code != 0 {
		t.Fatalf("import: %v\n%s%s", err, out, errOut)
	}
	if strings.Contains(out+errOut, "empty") {
		t.Errorf("import skipped a message:\n%s%s", out, errOut)
	}
	out, _, code, err = runCLI(db, "call", "get_message_range", "start_idx=0", "end_idx=3", "view=raw")
	if code != 0 {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   string          `json:"content"`
			Parts     json.RawMessage `json:"parts"`
			CreatedAt time.Time       `json:"created_at"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 4 {
		t.Fatalf("%d messages imported, want 4:\n%s", len(got.Messages), out)
	}
	for i := range got.Messages {
		var b bytes.Buffer
		_ = json.Compact(&b, got.Messages[i].Parts)
		got.Messages[i].Parts = b.Bytes()
	}
	at := []string{"10:00:00", "10:00:05", "10:00:06", "10:00:09"}
	for i, m := range got.Messages {
		if want, _ := time.Parse(time.RFC3339, "2025-03-01T"+at[i]+"Z"); !m.CreatedAt.Equal(want) {
			t.Errorf("message %d created_at %v, want %v", i, m.CreatedAt, want)
		}
	}
	if m := got.Messages[1]; m.Role != "assistant" || !strings.Contains(string(m.Parts), `"tool_name":"grep"`) || !strings.Contains(string(m.Parts), `"c1"`) {
		t.Errorf("the tool call: %+v (%s)", m, m.Parts)
	}
	if m := got.Messages[2]; m.Role != "tool" || !strings.Contains(string(m.Parts), `"tool_result"`) || !strings.Contains(string(m.Parts), `"c1"`) {
		t.Errorf("the tool result: %+v (%s)", m, m.Parts)
	}
}

// A transcript given as the database (a Claude Code .jsonl after --db)
// is called what it is, with the command that imports it, not "damaged"
// with the advice to salvage it; the file is left as it was.
func TestTranscriptGivenAsDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	transcript := filepath.Join(dir, "b7e1c2d4.jsonl")
	body := `{"type":"user","uuid":"u1","sessionId":"b7e1c2d4","message":{"role":"user","content":"hi"},"timestamp":"2025-01-01T00:00:00Z"}` + "\n" +
		`{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"b7e1c2d4","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]},"timestamp":"2025-01-01T00:00:01Z"}` + "\n"
	if err := os.WriteFile(transcript, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ls"}, {"show"}, {"--no-mcp"}, {"call", "list_sessions"}} {
		_, errOut, code, _ := runCLI(transcript, args...)
		if code != 1 {
			t.Errorf("weft --db %s %v: exit %d", transcript, args, code)
		}
		for _, want := range []string{transcript + " is a Claude Code transcript, not a weft database", "weft import " + transcript} {
			if !strings.Contains(errOut, want) {
				t.Errorf("weft %v does not say %q:\n%s", args, want, errOut)
			}
		}
		if strings.Contains(errOut, "damaged") || strings.Contains(errOut, "salvage") {
			t.Errorf("weft %v calls the transcript damaged:\n%s", args, errOut)
		}
	}
	if b, _ := os.ReadFile(transcript); string(b) != body {
		t.Errorf("the transcript was changed")
	}
}
