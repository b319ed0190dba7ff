package main

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A file an older weft wrote (schema 1) is brought up to date by the
// first command, even one that only reads, and says so once.
func TestReadingAnOlderFileMigratesItOnce(t *testing.T) {
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
