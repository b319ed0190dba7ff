package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"weft/formats"
	"weft/formats/claudecode"
	"weft/formats/codex"
	"weft/formats/follow"
	"weft/ops"
	"weft/ops/opstest"
	"weft/store/boltstore"
)

// Following a file as it is written, a line at a time, each batch the
// settled part imported whole (as weft import --follow does), ends in
// the same session as importing the finished file once: the same
// messages, and the same operations (a compaction's digest).
func TestFollowingEqualsImportingWhole(t *testing.T) {
	t.Parallel()
	files := []struct {
		path   string
		format formats.Format
		read   formats.Reader
	}{
		{"../../formats/testdata/claude-code/spotter_tool_heavy.jsonl", formats.ClaudeCode, claudecode.Read},
		{"../../formats/testdata/claude-code/claude-code-log_dag_compact_after_rewind.jsonl", formats.ClaudeCode, claudecode.Read},
		{"../../formats/testdata/codex-rollout/rollout_all_record_types.jsonl", formats.Codex, codex.Read},
	}
	for _, file := range files {
		t.Run(filepath.Base(file.path), func(t *testing.T) {
			data, err := os.ReadFile(file.path)
			if err != nil {
				t.Fatal(err)
			}
			followed := opstest.New(t)
			pending := follow.Pending(file.format)
			for end := 0; end < len(data); {
				end += bytes.IndexByte(data[end:], '\n') + 1
				settled := pending(data[:end])
				if !bytes.Contains(data[:settled], []byte("\n")) {
					continue
				}
				im := New(t.Context(), followed.Svc, Options{})
				file.read(bytes.NewReader(data[:settled]), im)
				mustClose(t, im)
			}
			sid := importData(followed, data, file.read) // the file is finished: nothing held back

			st, err := boltstore.Open(filepath.Join(t.TempDir(), "whole.db"), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			whole := &opstest.Fixture{T: t, St: st, Svc: ops.New(st)}
			wid := importData(whole, data, file.read)

			_, got, _ := followed.Svc.ExportItems(sid, false)
			_, want, _ := whole.Svc.ExportItems(wid, false)
			if g, w := identities(got), identities(want); !slices.Equal(g, w) {
				t.Errorf("followed: %d items, whole: %d\n got %q\nwant %q", len(g), len(w), g, w)
			}
			if g, w := followed.View(sid), whole.View(wid); len(g.Markers) != len(w.Markers) || g.Len() != w.Len() {
				t.Errorf("followed: %d items, %d markers; whole: %d, %d", g.Len(), len(g.Markers), w.Len(), len(w.Markers))
			}
		})
	}
}
