package claudecode

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

// Pending holds back the last response of a Claude Code that writes one a
// block at a time (stop_reason null): more of its blocks, and results
// between them, may still come. A response written whole (stop_reason
// set), a user's prompt after it, or the next response lets it go.
func TestPending(t *testing.T) {
	t.Parallel()
	user := `{"type":"user","uuid":"u%d","message":{"role":"user","content":"a prompt"}}`
	result := `{"type":"user","uuid":"r%d","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`
	streamed := `{"type":"assistant","uuid":"a%d","message":{"id":"msg_%s","role":"assistant","content":[{"type":"text","text":"x"}],"stop_reason":null}}`
	whole := `{"type":"assistant","uuid":"w%d","message":{"id":"msg_%s","role":"assistant","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn"}}`
	progress := `{"type":"progress","uuid":"p%d","data":{}}`
	line := func(format string, n int, id ...string) string {
		s := strings.Replace(format, "%d", string(rune('0'+n)), 1)
		if len(id) > 0 {
			s = strings.Replace(s, "%s", id[0], 1)
		}
		return s + "\n"
	}
	tests := []struct {
		name  string
		lines []string
		held  int // how many of the last lines are held back
	}{
		{"nothing", nil, 0},
		{"a prompt", []string{line(user, 1)}, 0},
		{"a response being written", []string{line(user, 1), line(streamed, 2, "A"), line(streamed, 3, "A")}, 2},
		{"its tool results between its blocks", []string{line(user, 1), line(streamed, 2, "A"), line(result, 3), line(progress, 4)}, 3},
		{"the next response began", []string{line(user, 1), line(streamed, 2, "A"), line(result, 3), line(streamed, 4, "B")}, 1},
		{"a prompt after it", []string{line(streamed, 2, "A"), line(user, 3)}, 0},
		{"a response written whole", []string{line(user, 1), line(whole, 2, "A"), line(whole, 3, "A")}, 0},
		{"a compaction before its summary", []string{line(user, 1), `{"type":"system","subtype":"compact_boundary","uuid":"cb"}` + "\n", line(progress, 2)}, 2},
		{"a compaction and its summary", []string{line(user, 1), `{"type":"system","subtype":"compact_boundary","uuid":"cb"}` + "\n", line(user, 2)}, 0},
		{"records that are not JSON", []string{line(user, 1), "{broken\n", line(streamed, 2, "A")}, 1},
	}
	for _, tt := range tests {
		data := []byte(strings.Join(tt.lines, ""))
		want := len(data)
		for _, l := range tt.lines[len(tt.lines)-tt.held:] {
			want -= len(l)
		}
		if got := Pending(data); got != want {
			t.Errorf("%s: Pending = %d, want %d (%d lines held)", tt.name, got, want, tt.held)
		}
	}
}

// Real sessions read as they grew, a line at a time: what Pending lets
// through never holds a message that the finished file has otherwise
// (an assistant message missing blocks written later), while reading
// the file whole cut at the same place does.
func TestPendingOnRealSessions(t *testing.T) {
	t.Parallel()
	for _, path := range []string{ccTools, ccLong} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			data := readFile(t, path)
			full, _ := readCC(t, data)
			final := map[string]string{}
			for _, m := range full.Messages {
				final[m.Key] = identity(m)
			}
			var ends []int
			for i, c := range data {
				if c == '\n' {
					ends = append(ends, i+1)
				}
			}
			step := max(1, len(ends)/25)
			early := 0
			for k := 0; k < len(ends); k += step {
				prefix := data[:ends[k]]
				if cut := Pending(prefix); cut < len(prefix) {
					early += partial(t, prefix, final)
					prefix = prefix[:cut]
				}
				if bytes.TrimSpace(prefix) == nil || !bytes.Contains(prefix, []byte(`"message"`)) {
					continue
				}
				if n := partial(t, prefix, final); n > 0 {
					t.Fatalf("%s, the first %d lines: %d messages differ from the finished file's", path, k+1, n)
				}
			}
			if early == 0 {
				t.Errorf("%s: reading the held-back lines too never cut a message short; the test shows nothing", path)
			}
		})
	}
}

// partial counts the messages read from prefix that the finished file
// has otherwise.
func partial(t *testing.T, prefix []byte, final map[string]string) int {
	t.Helper()
	rec := importtest.NewRecorder(t)
	if _, err := Read(bytes.NewReader(prefix), rec); err != nil || len(rec.Threads) == 0 {
		return 0 // nothing readable yet
	}
	n := 0
	for _, m := range rec.Threads[0].Messages {
		if id, ok := final[m.Key]; ok && id != identity(m) {
			n++
		}
	}
	return n
}

func identity(m formats.Message) string {
	return model.Identity(m.Role, m.Content, model.DecodeParts(m.Parts)).String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
