package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

// fixtureFile writes the fixture into a new current-schema file.
func fixtureFile(t *testing.T) (string, []fixtureSession) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	sessions := fixture()
	writeCurrent(t, s, sessions)
	s.Close()
	return path, sessions
}

// rawUpdate changes a closed file with bbolt directly.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCleanAndSalvageCopiesAll(t *testing.T) {
	t.Parallel()
	path, sessions := fixtureFile(t)
	if f, err := Check(path); err != nil || len(f) > 0 {
		t.Fatalf("Check of a sound file: %v, %v", f, err)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	rep, err := Salvage(path, out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != len(sessions) || rep.Placeholders != 0 || len(rep.Skipped) != 0 || rep.Sources != 1 {
		t.Errorf("report = %+v", rep)
	}
	holds(t, openT(t, out), sessions)
	if _, err := Salvage(path, out); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Salvage over an existing file: %v", err)
	}
	// An older file is checked and salvaged as it is.
	old := filepath.Join(t.TempDir(), "v1.db")
	writeSchema1(t, old, sessions)
	if f, err := Check(old); err != nil || len(f) > 0 {
		t.Errorf("Check of a sound schema-1 file: %v, %v", f, err)
	}
	out1 := filepath.Join(t.TempDir(), "out1.db")
	if _, err := Salvage(old, out1); err != nil {
		t.Fatal(err)
	}
	holds(t, openT(t, out1), sessions)
	if _, err := Check(filepath.Join(t.TempDir(), "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Check of a missing file: %v", err)
	}
	// A newer weft's file is not read as this weft's.
	newer := filepath.Join(t.TempDir(), "newer.db")
	openT(t, newer).Close()
	setSchema(t, newer, currentSchema+1, nil)
	if _, err := Check(newer); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Check of a newer file: %v", err)
	}
	if _, err := Salvage(newer, filepath.Join(t.TempDir(), "x.db")); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Salvage of a newer file: %v", err)
	}
}

// TestCheckFindsAndSalvageSkips damages one record at a time: Check
// names the session and the record, Salvage skips what it must and
// reports it, and its file checks clean.
func TestCheckFindsAndSalvageSkips(t *testing.T) {
	t.Parallel()
	const long, sorted, small = 1, 2, 3 // session numbers, in fixture order
	cases := []struct {
		name    string
		damage  func(tx *bolt.Tx) error
		finding string // in a finding's text
		skipped string // in the salvage report's skipped lines
		check   func(t *testing.T, s *Store)
	}{
		{
			name:    "an operation",
			damage:  func(tx *bolt.Tx) error { return firstOp(tx, long, []byte("{broken")) },
			finding: `session "long": op #`,
			skipped: `session "long": op #`,
			check: func(t *testing.T, s *Store) {
				mustView(t, s, func(tx *Tx) error {
					ops, err := tx.Ops("long")
					if err != nil || len(ops) != 4 {
						t.Errorf("salvaged ops = %d, %v; want the 4 readable", len(ops), err)
					}
					return nil
				})
			},
		},
		{
			name:    "a message",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bktMsgs).Put(key(sorted, put64(700)), []byte{1, 9}) },
			finding: `session "sorted": message 700: corrupt`,
			skipped: `session "sorted": messages 700..700 cannot be read`,
			check: func(t *testing.T, s *Store) {
				mustView(t, s, func(tx *Tx) error {
					m, err := tx.Message("sorted", 700)
					if err != nil || m.Meta["weft.salvage"] != "lost" || m.Role != model.RoleSystem {
						t.Errorf("message 700 = %+v, %v; want a placeholder", m, err)
					}
					if last, _ := tx.LastSeq("sorted"); last != 1500 {
						t.Errorf("LastSeq = %d", last)
					}
					return nil
				})
			},
		},
		{
			name: "the last messages",
			damage: func(tx *bolt.Tx) error {
				for seq := uint64(1490); seq <= 1500; seq++ {
					if err := tx.Bucket(bktMsgs).Delete(key(sorted, put64(seq))); err != nil {
						return err
					}
				}
				return nil
			},
			finding: `session "sorted": session record: says 1500 messages, but 1489 are stored`,
			skipped: `session "sorted": messages 1490..1500 cannot be read`,
			check: func(t *testing.T, s *Store) {
				mustView(t, s, func(tx *Tx) error {
					info, err := tx.Session("sorted")
					if err != nil || info.MessageCount != 1489 {
						t.Errorf("salvaged record = %+v, %v", info, err)
					}
					return nil
				})
			},
		},
		{
			name: "a session record",
			damage: func(tx *bolt.Tx) error {
				return tx.Bucket(bktSessions).Put([]byte("small"), []byte{record.Format1, 0, 0, 0, small, 0xff})
			},
			finding: `session "small": session record: corrupt`,
			skipped: `session "small": its record cannot be read`,
			check: func(t *testing.T, s *Store) {
				mustView(t, s, func(tx *Tx) error {
					info, err := tx.Session("small")
					if err != nil || info.MessageCount != 7 || !strings.Contains(info.Title, "salvaged") {
						t.Errorf("salvaged record = %+v, %v", info, err)
					}
					return nil
				})
			},
		},
		{
			name:    "a session record's key",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bktSessions).Delete([]byte("small")) },
			finding: `records of session number 3, which no session has`,
			skipped: `copied as session "salvaged-3"`,
			check: func(t *testing.T, s *Store) {
				mustView(t, s, func(tx *Tx) error {
					if n, err := tx.LastSeq("salvaged-3"); err != nil || n != 7 {
						t.Errorf("salvaged-3 has %d messages, %v", n, err)
					}
					return nil
				})
			},
		},
		{
			name:    "a heads chunk",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bktHeads).Put(key(long, put64(1)), make([]byte, chunkLen)) },
			finding: `session "long": heads chunk 1: the head of message 1025 does not match`,
		},
		{
			name: "an op index entry",
			damage: func(tx *bolt.Tx) error {
				return tx.Bucket(bktOpIndex).Put([]byte("long-op1"), append([]byte("long"), put64(99)...))
			},
			finding: `session "long": op long-op1: its index entry`,
		},
		{
			name:    "an import key",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bktKeys).Put(key(small, []byte("k")), []byte{50}) },
			finding: `session "small": import keys: 1 key point past the 7 stored messages`,
			skipped: `session "small": 1 import keys are unreadable or point past`,
		},
		{
			name:    "a source mapping",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bktSources).Put([]byte("x:y"), []byte("nobody")) },
			finding: `source "x:y": names session "nobody"`,
			skipped: `1 source mappings name sessions that were not copied`,
		},
		{
			name:    "a message key",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bktMsgs).Put(key(small, []byte{1}), []byte("x")) },
			finding: `session "small": message key: 01 is not 8 bytes`,
			skipped: `session "small": a message key 01 is out of place`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, _ := fixtureFile(t)
			rawUpdate(t, path, c.damage)
			findings, err := Check(path)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range findings {
				found = found || strings.Contains(f.String(), c.finding)
			}
			if !found {
				t.Errorf("no finding says %q: %v", c.finding, findings)
			}
			out := filepath.Join(t.TempDir(), "out.db")
			rep, err := Salvage(path, out)
			if err != nil {
				t.Fatal(err)
			}
			if c.skipped != "" && !strings.Contains(strings.Join(rep.Skipped, "\n"), c.skipped) {
				t.Errorf("the report does not say %q: %q", c.skipped, rep.Skipped)
			}
			if f, err := Check(out); err != nil || len(f) > 0 {
				t.Errorf("the salvaged file does not check clean: %v, %v", f, err)
			}
			if c.check != nil {
				s := openT(t, out)
				c.check(t, s)
			}
		})
	}
}

// firstOp replaces the value of session num's first operation.
func firstOp(tx *bolt.Tx, num uint32, v []byte) error {
	k, _ := tx.Bucket(bktOps).Cursor().Seek(key(num))
	return tx.Bucket(bktOps).Put(append([]byte(nil), k...), v)
}

// TestCheckWaitsForNoWriter: Check and Salvage read a file only under
// bbolt's lock, so a running weft's writes are never read half-done; a
// file in use is reported as such. It shortens damagedTimeout, which
// every Check and Salvage reads, so it is not parallel.
func TestCheckWaitsForNoWriter(t *testing.T) {
	saved := damagedTimeout
	damagedTimeout = 100 * time.Millisecond
	t.Cleanup(func() { damagedTimeout = saved })
	s, path := tempDB(t)
	putSession(t, s, "s")
	if _, err := Check(path); !errors.Is(err, ErrInUse) {
		t.Errorf("Check of a file in use: %v", err)
	}
	if _, err := Salvage(path, filepath.Join(t.TempDir(), "out.db")); !errors.Is(err, ErrInUse) {
		t.Errorf("Salvage of a file in use: %v", err)
	}
}
