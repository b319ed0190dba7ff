package ingest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/claudecode"
	"weft/formats/export"
	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
)

// importData imports a conversation file's bytes into f and returns
// the ID of the (last) session it went into.
func importData(f *opstest.Fixture, data []byte, read formats.Reader) string {
	f.T.Helper()
	im := New(context.Background(), f.Svc, Options{})
	if _, err := read(bytes.NewReader(data), im); err != nil {
		f.T.Fatal(err)
	}
	mustClose(f.T, im)
	return im.Sessions[len(im.Sessions)-1].SessionID
}

// pairBounds are the places in items (0..len) where a range may start
// or end and keep every tool call with its result: no call before the
// place is answered after it.
func pairBounds(items []formats.Item) []int {
	open := map[string]bool{}
	bounds := []int{0}
	for i, it := range items {
		for _, p := range it.Parts {
			switch p.Type {
			case model.PartToolCall:
				open[p.ToolCallID] = true
			case model.PartToolResult:
				delete(open, p.ToolCallID)
			}
		}
		if len(open) == 0 {
			bounds = append(bounds, i+1)
		}
	}
	return bounds
}

// ids are the item IDs of items[lo:hi], as a JSON list.
func ids(items []formats.Item, lo, hi int) string {
	var q []string
	for _, it := range items[lo:hi] {
		q = append(q, fmt.Sprintf("%q", it.ID))
	}
	return "[" + strings.Join(q, ",") + "]"
}

// identities are the items' roles and identities, text that is only
// white space left out (a provider's body has none).
func identities(items []formats.Item) []string {
	var out []string
	for _, it := range items {
		parts := slices.DeleteFunc(slices.Clone(it.Parts), func(p model.Part) bool {
			return p.Type == model.PartText && strings.TrimSpace(p.Text) == "" || p.Type == model.PartThinking
		})
		if len(it.Parts) > 0 && len(parts) == 0 {
			continue // nothing a provider is sent
		}
		out = append(out, string(it.Role)+" "+model.Identity(it.Role, it.Content, parts).String()[:12])
	}
	return out
}

// Write-back: a real Claude Code session, edited by the operator (a
// digest, a snip, an insert), written as a Claude Code transcript and
// imported again, is the effective thread it was written from: the
// same messages, roles, texts, tool calls and results, the summary and
// the inserted message among them.
func TestClaudeCodeWriteBackRoundTrip(t *testing.T) {
	t.Parallel()
	files := []string{
		"../../formats/testdata/claude-code/spotter_long_session.jsonl",
		"../../formats/testdata/claude-code/spotter_tool_heavy.jsonl",
		"../../formats/testdata/claude-code/claude-code-log_dag_compact_after_rewind.jsonl",
	}
	for _, path := range files {
		t.Run(path[strings.LastIndex(path, "/")+1:], func(t *testing.T) {
			f := opstest.New(t)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sid := importData(f, data, claudecode.Read)
			_, items, err := f.Svc.ExportItems(sid, false)
			if err != nil {
				t.Fatal(err)
			}
			// Ranges that keep every tool call with its result: one
			// digested, a later one snipped, a note inserted before the
			// digest. (The rewind file is three messages and the
			// digest of its compaction: it goes back as it is.)
			b := pairBounds(items)
			edited := len(b) >= 5
			if edited {
				d1, d2, s1, s2 := b[1], b[len(b)/3], b[len(b)/2], b[len(b)/2+1]
				call(f, (*ops.Service).DigestMessages, fmt.Sprintf(`{"session_id":%q,"ids":%s,"summary":"The operator's summary."}`, sid, ids(items, d1, d2)))
				call(f, (*ops.Service).SnipMessages, fmt.Sprintf(`{"session_id":%q,"ids":%s}`, sid, ids(items, s1, s2)))
				call(f, (*ops.Service).InsertMessages, fmt.Sprintf(`{"session_id":%q,"after_id":%q,"messages":[{"role":"user","content":"An inserted note."}]}`, sid, items[d1-1].ID))
			}
			info, items, err := f.Svc.ExportItems(sid, false)
			if err != nil {
				t.Fatal(err)
			}

			var buf bytes.Buffer
			rep, err := export.WriteClaudeCode(&buf, items, export.ClaudeCodeOptions{Cwd: "/home/ana/project", Title: info.Title, Now: f.Now})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Folded) > 0 {
				t.Errorf("the export changed the thread: %q", rep.Folded)
			}
			back := importData(f, buf.Bytes(), claudecode.Read)
			if back == sid {
				t.Fatal("the transcript went into the session it came from; it has a session ID of its own")
			}
			backInfo, raw, err := f.Svc.ExportItems(back, true)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := identities(raw), identities(items); !slices.Equal(got, want) {
				t.Errorf("read back %d messages, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
			}
			if backInfo.Title != info.Title {
				t.Errorf("title %q, want %q", backInfo.Title, info.Title)
			}
			summary, note := !edited, !edited
			for _, it := range raw {
				summary = summary || it.Role == model.RoleSystem && it.Content == "The operator's summary."
				note = note || it.Role == model.RoleUser && it.Content == "An inserted note."
			}
			if !summary || !note {
				t.Errorf("the summary (%v) or the inserted note (%v) did not come back", summary, note)
			}
		})
	}
}
