package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const data = "../../formats/testdata"

func TestImportEveryFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		sessions int
		says     string
		code     int // 1: a record of the file could not be imported
	}{
		{"claude-code/spotter_long_session.jsonl", 1, "292 messages imported into 1 session (1 new)", 0},
		{"claude-code/spotter_tool_heavy.jsonl", 1, "17 messages imported into 1 session (1 new)", 0},
		{"claude-code/claude-code-log_dag_compact_after_rewind.jsonl", 1, "\"Start\", 1 operation\n", 0},
		{"chatgpt-export/chatgpt2graph_conversations.json", 1, "42 messages imported", 0},
		{"chatgpt-export/chatlore_conversations_edge_cases.json", 2, "into 2 sessions (2 new); 1 record could not be read", 1}, // a conversation without a mapping
		{"codex-rollout/rollout_all_record_types.jsonl", 1, "9 messages imported", 0},
		{"openai-messages/llamafactory_mllm_demo.json", 6, "24 messages imported into 6 sessions (6 new)", 0},
		{"sharegpt/fastchat_dummy_conversation.json", 500, "2,000 messages imported into 500 sessions (500 new)", 0},
		{"sharegpt/llamafactory_glaive_toolcall_en_demo.json", 300, "1,914 messages imported into 300 sessions (300 new)", 0},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "import.db")
			out, code, err := weft(t, db, "import", filepath.Join(data, tt.file))
			if code != tt.code {
				t.Fatalf("import: exit %d (%v), want %d", code, err, tt.code)
			}
			if !strings.Contains(out, tt.says) {
				t.Errorf("import said:\n%s\nwant %q", out, tt.says)
			}
			var ls struct{ Total int }
			lsOut, _, _ := weft(t, db, "ls", "--json")
			json.Unmarshal([]byte(lsOut), &ls)
			if ls.Total != tt.sessions {
				t.Errorf("%d sessions, want %d", ls.Total, tt.sessions)
			}
			// Again: nothing new.
			again, code, err := weft(t, db, "import", filepath.Join(data, tt.file))
			nothing := "nothing new"
			if tt.code != 0 {
				nothing = "nothing added"
			}
			if code != tt.code || !strings.Contains(again, nothing) {
				t.Errorf("re-import added something (exit %d, %v):\n%s", code, err, again)
			}
			lsOut, _, _ = weft(t, db, "ls", "--json")
			json.Unmarshal([]byte(lsOut), &ls)
			if ls.Total != tt.sessions {
				t.Errorf("re-import: %d sessions", ls.Total)
			}
		})
	}
}

func TestExportFormats(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "export.db")
	if _, code, err := weft(t, db, "import", filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")); code != 0 {
		t.Fatal(err)
	}
	// Snip a tool call so its result is orphaned: exports must still be valid.
	if _, code, err := weft(t, db, "call", "snip_messages", "start_idx=1", "end_idx=1"); code != 0 {
		t.Fatal(err)
	}
	out, code, err := weft(t, db, "export", "--format", "openai")
	var oa struct {
		Messages []map[string]any `json:"messages"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &oa) != nil || len(oa.Messages) == 0 {
		t.Fatalf("openai export (%v):\n%.300s", err, out)
	}
	out, code, err = weft(t, db, "export", "--format", "anthropic")
	var an struct {
		Messages []map[string]any `json:"messages"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &an) != nil || an.Messages[0]["role"] != "user" {
		t.Fatalf("anthropic export (%v):\n%.300s", err, out)
	}
	out, code, _ = weft(t, db, "export", "--format", "markdown")
	if code != 0 || !strings.HasPrefix(out, "# ") {
		t.Fatalf("markdown export:\n%.300s", out)
	}
	raw, _, _ := weft(t, db, "export", "--format", "openai", "--raw")
	if len(raw) <= len(out)/10 {
		t.Fatalf("raw export is empty")
	}

	// jsonl: lossless, into another file, same effective thread.
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if _, code, err := weft(t, db, "export", "--format", "jsonl", "-o", path); code != 0 {
		t.Fatal(err)
	}
	db2 := filepath.Join(t.TempDir(), "other.db")
	if _, code, err := weft(t, db2, "import", path); code != 0 {
		t.Fatal(err)
	}
	a, _, _ := weft(t, db, "export", "--format", "openai")
	b, _, _ := weft(t, db2, "export", "--format", "openai")
	if a != b {
		t.Fatalf("the effective thread changed moving between files")
	}
}

func TestImportBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	db := filepath.Join(dir, "bad.db")
	tests := []struct {
		name, content string
		code          int
		says          string
	}{
		{"empty.jsonl", "", 1, "empty"},
		{"garbage.bin", "\x00\x01\x02\xff garbage", 1, "not JSON"},
		{"unknown.json", `{"foo": 1}`, 1, "none of claude-code"},
	}
	for _, tt := range tests {
		_, code, err := weft(t, db, "import", write(tt.name, tt.content))
		if code != tt.code || err == nil {
			t.Errorf("%s: exit %d (%v), want %d", tt.name, code, err, tt.code)
		}
	}
	if n := sessionCount(t, db); n != "0" {
		t.Errorf("refused imports left %s sessions", n)
	}
	// A file with one broken line imports the rest, names the line, and
	// exits 1: not everything was imported.
	p := write("partly.jsonl", `{"role":"user","content":"one"}`+"\n{broken\n"+`{"role":"assistant","content":"two"}`+"\n")
	var errOut strings.Builder
	var out strings.Builder
	err := run(t.Context(), []string{"--db", db, "import", p}, &out, &errOut)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(err.Error(), "imported only in part") ||
		!strings.Contains(errOut.String(), "line 2") || !strings.Contains(out.String(), "2 messages imported") {
		t.Fatalf("partly broken file: %v\nout: %s\nerr: %s", err, out.String(), errOut.String())
	}
	if _, code, _ := weft(t, db, "import", "--format", "yaml", p); code != 2 {
		t.Errorf("unknown --format: exit %d, want 2", code)
	}
}
