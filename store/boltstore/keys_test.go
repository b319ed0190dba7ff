package boltstore

import (
	"fmt"
	"slices"
	"testing"
)

// A session's import keys and sources read back whole: each key with the
// seq it names, and only the sources recorded for that session.
func TestImportKeysAndSourcesOfASession(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s1")
	putSession(t, s, "s2")
	mustUpdate(t, s, func(tx *Tx) error {
		for _, kv := range []struct {
			sid, key string
			seq      uint64
		}{{"s1", "b", 2}, {"s1", "a", 1}, {"s1", "c\x00x", 1}, {"s2", "z", 9}} {
			if err := tx.PutImportKey(kv.sid, kv.key, kv.seq); err != nil {
				return err
			}
		}
		for src, sid := range map[string]string{"claude-code:x": "s1", "weft:old": "s1", "codex:y": "s2"} {
			if err := tx.PutSourceSession(src, sid); err != nil {
				return err
			}
		}
		return nil
	})
	mustView(t, s, func(tx *Tx) error {
		var got []string
		err := tx.EachImportKey("s1", func(key string, seq uint64) error {
			got = append(got, fmt.Sprintf("%q=%d", key, seq))
			return nil
		})
		if err != nil || !slices.Equal(got, []string{`"a"=1`, `"b"=2`, `"c\x00x"=1`}) {
			t.Errorf("keys of s1: %v (%v)", got, err)
		}
		if err := tx.EachImportKey("none", func(string, uint64) error { return nil }); err == nil {
			t.Errorf("keys of a session that does not exist: no error")
		}
		sources, err := tx.SessionSources("s1")
		if err != nil || !slices.Equal(sources, []string{"claude-code:x", "weft:old"}) {
			t.Errorf("sources of s1: %v (%v)", sources, err)
		}
		if sources, _ := tx.SessionSources("s3"); len(sources) != 0 {
			t.Errorf("sources of s3: %v", sources)
		}
		return nil
	})
}
