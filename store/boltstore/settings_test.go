package boltstore

import (
	"path/filepath"
	"testing"
)

// The file's settings read back, list in name order, go when emptied,
// outlive a reopen, and are copied by salvage; check finds nothing
// wrong with them.
func TestSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "weft.db")
	s := openT(t, path)
	putSession(t, s, "s")
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutSetting("memory/proxied", []byte(`{"max_active_turns":4}`)); err != nil {
			return err
		}
		if err := tx.PutSetting("memory/file", []byte(`{"max_active_turns":6}`)); err != nil {
			return err
		}
		return tx.PutSetting("gone", []byte("x"))
	})
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutSetting("gone", nil) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if findings, err := Check(path); err != nil || len(findings) != 0 {
		t.Fatalf("check: %v, %v", findings, err)
	}
	out := filepath.Join(dir, "salvaged.db")
	if _, err := Salvage(path, out); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, out} {
		st := openT(t, p)
		var names []string
		mustView(t, st, func(tx *Tx) error {
			if got := string(tx.Setting("memory/file")); got != `{"max_active_turns":6}` {
				t.Errorf("%s: memory/file is %q", p, got)
			}
			if tx.Setting("gone") != nil {
				t.Errorf("%s: an emptied setting is still there", p)
			}
			return tx.Settings(func(name string, _ []byte) error { names = append(names, name); return nil })
		})
		if len(names) != 2 || names[0] != "memory/file" || names[1] != "memory/proxied" {
			t.Errorf("%s: settings %v", p, names)
		}
	}
}
