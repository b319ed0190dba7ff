package rig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Sessions reads what list_sessions says through weft call: the session
// weft new made, under its ID and title.
func TestSessions(t *testing.T) {
	weft := Weft(t, "")
	db := filepath.Join(t.TempDir(), "weft.db")
	sid := strings.TrimSpace(string(Run(t, weft, "--db", db, "new", "a rig's session")))
	got := Sessions(t, weft, db)
	if len(got) != 1 || got[0].SessionID != sid || got[0].Title != "a rig's session" || got[0].MessageCount != 0 {
		t.Fatalf("list_sessions gave %+v, want session %s, titled, empty", got, sid)
	}
}
