package main

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A file an older weft wrote (schema 1) is brought up to date by the
// first command, even one that only reads, and says so once.
func TestReadingAnOlderFileMigratesItOnce(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "old.db")
	b, err := bolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		for _, name := range []string{"sessions", "opindex", "threads", "sources"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return meta.Put([]byte("schema"), binary.BigEndian.AppendUint32(nil, 1))
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code, err := runCLI(db, "ls")
	if code != 0 || !strings.Contains(out, "no sessions yet") || !strings.Contains(errOut, "brought up to this weft's file layout") {
		t.Fatalf("first ls: exit %d (%v)\n%s%s", code, err, out, errOut)
	}
	_, errOut, code, _ = runCLI(db, "ls")
	if code != 0 || strings.Contains(errOut, "brought up") {
		t.Fatalf("second ls: exit %d, %q", code, errOut)
	}
}

// One corrupt record in one session: ls lists every session and says
// which cannot be read; the others show and export.
func TestOneDamagedSessionLeavesTheOthersOnTheCommandLine(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "damaged.db")
	bad, _, _ := weft(t, db, "new", "damaged")
	good, _, _ := weft(t, db, "new", "sound")
	bad, good = strings.TrimSpace(bad), strings.TrimSpace(good)
	for _, sid := range []string{bad, good} {
		if _, code, err := weft(t, db, "call", "append_messages", "session_id="+sid, `messages=[{"role":"user","content":"hello"}]`); code != 0 {
			t.Fatal(err)
		}
		if _, code, err := weft(t, db, "call", "tag_messages", "session_id="+sid, "ids=m1", "tags=t"); code != 0 {
			t.Fatal(err)
		}
	}
	// Break the first operation record (the damaged session's).
	b, err := bolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket([]byte("ops")).Cursor().First()
		return tx.Bucket([]byte("ops")).Put(bytes.Clone(k), []byte(`{"id": broken`))
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, code, err := weft(t, db, "ls")
	if code != 0 || !strings.Contains(out, "sound") || !strings.Contains(out, "damaged") || !strings.Contains(out, bad+" cannot be read") {
		t.Fatalf("ls: exit %d (%v)\n%s", code, err, out)
	}
	if out, code, err := weft(t, db, "show", good); code != 0 || !strings.Contains(out, "hello") {
		t.Errorf("show the sound session: exit %d (%v)\n%s", code, err, out)
	}
	if out, code, err := weft(t, db, "export", good, "--format", "openai"); code != 0 || !strings.Contains(out, "hello") {
		t.Errorf("export the sound session: exit %d (%v)\n%s", code, err, out)
	}
	if _, code, err := weft(t, db, "show", bad); code == 0 || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("show the damaged session: exit %d, %v", code, err)
	}
}
