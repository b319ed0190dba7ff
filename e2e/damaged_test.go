package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// weft on a file whose damage shows only when it is read does not open
// its screen to wait for a key: it prints the whole error, with what to
// run, and exits non-zero at once.
func TestDamagedFileRefusedBeforeTheScreen(t *testing.T) {
	needTmux(t)
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	// Forty sessions, in one import: the latest one's messages then
	// have a page of their own.
	var lines strings.Builder
	for i := range 40 {
		sid := fmt.Sprintf("sess%012d", i)
		for _, rec := range []any{
			map[string]any{"weft": 1, "type": "session", "session": map[string]any{"id": sid, "title": fmt.Sprintf("session %d", i), "created_at": "2026-01-02T10:00:00Z", "updated_at": fmt.Sprintf("2026-01-02T10:%02d:00Z", i)}},
			map[string]any{"type": "message", "message": map[string]any{"id": "m1", "seq": 1, "role": "user", "content": fmt.Sprintf("question %d %s", i, strings.Repeat("x", 400)), "created_at": "2026-01-02T10:00:00Z"}},
			map[string]any{"type": "message", "message": map[string]any{"id": "m2", "seq": 2, "role": "assistant", "content": fmt.Sprintf("answer %d", i), "created_at": "2026-01-02T10:00:01Z"}},
		} {
			b, _ := json.Marshal(rec)
			lines.Write(append(b, '\n'))
		}
	}
	src := filepath.Join(dir, "sessions.jsonl")
	if err := os.WriteFile(src, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	weftCLI(t, "--db", db, "import", src)
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	for i, at := 0, 0; ; at += i + 1 {
		i = bytes.Index(b[at:], []byte("question 39 "))
		if i < 0 {
			break
		}
		clear(b[(at+i)/ps*ps : ((at+i)/ps+1)*ps])
	}
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The status is printed by a shell around weft: tmux, which marks
	// the pane dead when its terminal closes, does not always learn the
	// status of a program that exits at once.
	s := startScreen(t, TerminalOptions{Width: 220, Height: 30, Env: []string{"TZ=UTC"}},
		"sh", "-c", `"$0" --db "$1" --no-mcp; echo "weft exited $?"`, weftBinary(t), db)
	s.see("weft exited 1")
	text, err := s.term.CaptureHistory()
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{"is damaged", "weft check --db " + db, "weft salvage --db " + db + " OUT"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, text)
		}
	}
}
