package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

// bigMessages appends messages of the given sizes to session id.
func bigMessages(t *testing.T, s *Store, id string, sizes ...int) []model.Message {
	t.Helper()
	var out []model.Message
	mustUpdate(t, s, func(tx *Tx) error {
		info, err := tx.Session(id)
		if err != nil {
			return err
		}
		for _, n := range sizes {
			info.MessageCount++
			seq := uint64(info.MessageCount)
			text := strings.Repeat(fmt.Sprintf("line %d of message %d, with \"quotes\" and a café\n", seq, seq), n/20+1)[:n]
			m := msg(seq, model.RoleTool, text, t0.Add(time.Duration(seq)*time.Second))
			if err := tx.AppendMessages(id, []model.Message{m}); err != nil {
				return err
			}
			out = append(out, m)
		}
		return tx.PutSession(info)
	})
	return out
}

// A large message is written once: the messages appended after it do
// not write it again, nor does a large one appended after others. (A
// leaf of bbolt's holds two to four records, however large, and is
// written whole when one of its keys changes: three 1 MB messages made
// each of the next small appends write 3 MB.)
func TestLargeRecordsAreWrittenOnce(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	written := func(sizes ...int) int {
		st := s.db.Stats()
		before := st.TxStats.GetPageAlloc()
		bigMessages(t, s, "s", sizes...)
		st = s.db.Stats()
		return int(st.TxStats.GetPageAlloc() - before)
	}
	for k := range 4 {
		// Its chunks fill whole pages: 1,024 KB and a few pages for the
		// stub, the heads, the branch pages and the freelist (1,280 KB while a 16 KB
		// chunk took five pages). 1,076-1,092 KB measured.
		if got := written(1 << 20); got > 1<<20+96<<10 {
			t.Errorf("the large message %d wrote %d KB, for 1,024 KB", k, got>>10)
		}
	}
	for k := range 6 {
		if got := written(200); got > 96<<10 {
			t.Errorf("the small message %d after them wrote %d KB", k, got>>10)
		}
	}
}

// A large message reads back as it was stored, through every read, and
// check, salvage and delete know where its record is.
func TestLargeRecordsReadBack(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	putSession(t, s, "s")
	putSession(t, s, "other")
	want := bigMessages(t, s, "s", 100, bigRecord-64, bigRecord, 3*bigChunk+7, 1<<20, 300)
	bigMessages(t, s, "other", 1<<20)
	mustView(t, s, func(tx *Tx) error {
		for _, w := range want {
			m, err := tx.Message("s", w.Seq)
			if err != nil {
				return err
			}
			sameMessage(t, m, w)
		}
		k := 0
		if err := tx.Messages("s", 1, uint64(len(want)), func(m model.Message) error {
			sameMessage(t, m, want[k])
			k++
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ScanContent("s", func(seq uint64, content []byte) bool {
			if string(content) != want[seq-1].Content {
				t.Errorf("ScanContent: message %d differs", seq)
			}
			return true
		}); err != nil {
			return err
		}
		heads, err := tx.Heads("s")
		if err != nil {
			return err
		}
		for i, h := range heads {
			if h != want[i].Head() {
				t.Errorf("head %d: %+v, want %+v", i+1, h, want[i].Head())
			}
		}
		return nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if found, err := Check(path); err != nil || len(found) > 0 {
		t.Fatalf("check: %v %v", found, err)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	if _, err := Salvage(path, out); err != nil {
		t.Fatal(err)
	}
	c := openT(t, out)
	mustView(t, c, func(tx *Tx) error {
		m, err := tx.Message("s", 5)
		if err == nil && m.Content != want[4].Content {
			t.Error("the salvaged copy differs")
		}
		return err
	})
	s = openT(t, path)
	mustUpdate(t, s, func(tx *Tx) error { return tx.DeleteSession("s") })
	mustView(t, s, func(tx *Tx) error {
		other, _ := tx.num("other")
		_ = tx.tx.Bucket(bktBig).ForEach(func(k, _ []byte) error {
			if be32(k) != other {
				t.Errorf("after the delete the big bucket holds %x", k)
			}
			return nil
		})
		_, err := tx.Message("other", 1)
		return err
	})
}

// A chunk gone (a damaged file) is said: the message is corrupt, and
// check names it; nothing panics.
func TestLargeRecordMissingAChunk(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	putSession(t, s, "s")
	bigMessages(t, s, "s", 100, 5*bigChunk)
	mustUpdate(t, s, func(tx *Tx) error {
		num, _ := tx.num("s")
		return tx.tx.Bucket(bktBig).Delete(key(num, put64(2), put32(3)))
	})
	mustView(t, s, func(tx *Tx) error {
		_, err := tx.Message("s", 2)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "chunk 3") {
			t.Errorf("a message missing a chunk: %v", err)
		}
		if _, err := tx.Message("s", 1); err != nil {
			t.Errorf("the message beside it: %v", err)
		}
		return nil
	})
	s.Close()
	found, err := Check(path)
	if err != nil || len(found) == 0 || !strings.Contains(fmt.Sprint(found), "chunk 3") {
		t.Errorf("check: %v %v", found, err)
	}
}

// A schema 3 file reads as it is; opened to write, it gets the big
// bucket and says schema 4, and takes large messages.
func TestSchema3TakesLargeRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v3.db")
	s := openT(t, path)
	putSession(t, s, "s")
	small := bigMessages(t, s, "s", 100)
	s.Close()
	setSchema(t, path, 3, func(tx *bolt.Tx) error { return tx.DeleteBucket(bktBig) })
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	mustView(t, r, func(tx *Tx) error {
		m, err := tx.Message("s", 1)
		if err == nil && m.Content != small[0].Content {
			t.Error("differs")
		}
		return err
	})
	r.Close()
	s = openT(t, path)
	s.Close()
	if v := schemaOf(t, path); v != 4 {
		t.Errorf("opened to write, schema %d", v)
	}
	s = openT(t, path)
	big := bigMessages(t, s, "s", 1<<20)
	mustView(t, s, func(tx *Tx) error {
		m, err := tx.Message("s", 2)
		if err == nil && !bytes.Equal([]byte(m.Content), []byte(big[0].Content)) {
			t.Error("the large message differs")
		}
		return err
	})
}

// A large record is written in chunks from the segments it is made of
// (the bytes before its content, the content, the bytes after it): a
// chunk within one segment, one across several, and segments shorter
// than a chunk or empty all read back as the record joined.
func TestPutBigJoinsSegments(t *testing.T) {
	t.Parallel()
	header := append([]byte{record.MessageFormat, 2, 0}, make([]byte, 8)...)
	header = append(header, 0x02) // tokens
	fill := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	cases := map[string][][]byte{
		"one segment":             {append(header, fill(3*bigChunk+7, 'a')...)},
		"content across chunks":   {header, fill(2*bigChunk+3, 'b'), fill(10, 'c')},
		"segments of a chunk":     {append(header, fill(bigChunk-len(header), 'd')...), fill(bigChunk, 'e'), fill(5, 'f')},
		"short and empty ones":    {header, {}, fill(1, 'g'), {}, fill(bigChunk, 'h'), fill(1, 'i')},
		"ends on a chunk's bound": {header, fill(2*bigChunk-len(header), 'j'), {}},
	}
	for name, segs := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := tempDB(t)
			want := bytes.Join(segs, nil)
			err := s.db.Update(func(tx *bolt.Tx) error {
				big, err := tx.CreateBucketIfNotExists(bktBig)
				if err != nil {
					return err
				}
				stub, err := putBig(big, 7, 3, segs, model.HeadHasParts)
				if err != nil {
					return err
				}
				length, flags, err := record.StubInfo(stub)
				if err != nil || length != uint64(len(want)) || flags != model.HeadHasParts {
					t.Errorf("stub says %d bytes, flags %d (%v), want %d bytes", length, flags, err, len(want))
				}
				got, err := whole(tx, 7, 3, stub)
				if err != nil {
					return err
				}
				if !bytes.Equal(got, want) {
					t.Errorf("read back %d bytes, not the %d written", len(got), len(want))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
