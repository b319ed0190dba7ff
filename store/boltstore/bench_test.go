package boltstore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"weft/model"
	"weft/store/record"
)

const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. "

// benchMessage is a message with a ~200-byte body.
func benchMessage(seq uint64) model.Message {
	content := "message " + strconv.FormatUint(seq, 10) + ": " + lorem[seq%32:seq%32+180]
	role := model.RoleUser
	if seq%2 == 0 {
		role = model.RoleAssistant
	}
	return model.Message{
		ID:        model.MessageID(seq),
		Seq:       seq,
		Role:      role,
		Content:   content,
		CreatedAt: time.Unix(1_700_000_000+int64(seq), int64(seq)).UTC(),
		Tokens:    len(content) / 4,
		// A fixed SHA-256-shaped digest: stored the same as a real one,
		// without hashing a million bodies while building.
		Digest: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	}
}

// buildSession makes a file holding one session "s" with n messages.
func buildSession(b *testing.B, n int) *Store {
	b.Helper()
	start := time.Now()
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	s.db.NoSync = true // building only; the timed part syncs as usual
	defer func() { s.db.NoSync = false }()
	if err := s.update(func(tx *Tx) error { return tx.PutSession(model.Session{ID: "s"}) }); err != nil {
		b.Fatal(err)
	}
	const batch = 50_000
	msgs := make([]model.Message, 0, batch)
	for first := 1; first <= n; first += batch {
		msgs = msgs[:0]
		for seq := first; seq < first+batch && seq <= n; seq++ {
			msgs = append(msgs, benchMessage(uint64(seq)))
		}
		if err := s.update(func(tx *Tx) error { return tx.AppendMessages("s", msgs) }); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built %d messages in %v", n, time.Since(start).Round(time.Millisecond))
	return s
}

func BenchmarkHeads1M(b *testing.B) {
	const n = 1_000_000
	s := buildSession(b, n)
	for b.Loop() {
		err := s.view(func(tx *Tx) error {
			h, err := tx.Heads("s")
			if err == nil && len(h) != n {
				b.Fatalf("Heads gave %d", len(h))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendOne(b *testing.B) {
	const n = 1_000_000
	s := buildSession(b, n)
	for _, sync := range []bool{true, false} {
		name := "sync"
		if !sync {
			name = "nosync"
		}
		b.Run(name, func(b *testing.B) {
			s.db.NoSync = !sync
			defer func() { s.db.NoSync = false }()
			for b.Loop() {
				err := s.update(func(tx *Tx) error {
					last, err := tx.LastSeq("s")
					if err != nil {
						return err
					}
					return tx.AppendMessages("s", []model.Message{benchMessage(last + 1)})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkScanContent100k(b *testing.B) {
	const n = 100_000
	s := buildSession(b, n)
	for b.Loop() {
		count, size := 0, 0
		err := s.view(func(tx *Tx) error {
			return tx.ScanContent("s", func(_ uint64, content []byte) bool {
				count++
				size += len(content)
				return true
			})
		})
		if err != nil {
			b.Fatal(err)
		}
		if count != n {
			b.Fatalf("scanned %d", count)
		}
	}
}

func BenchmarkMessageDecode(b *testing.B) {
	m := benchMessage(12345)
	m.Meta = map[string]string{"model": "x", "source": "y"}
	v := record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.PackParts(&m))
	for b.Loop() {
		if _, err := record.DecodeMessage(v, 12345); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManySessions writes 100k sessions of two ~50-byte messages, as
// an import of 100k ShareGPT conversations does (a record with one
// change, the messages, an import key for each, the source mapping), in
// transactions of 1,000 sessions, and reports the file's size per byte of
// message content.
func BenchmarkManySessions(b *testing.B) {
	const sessions, perTx = 100_000, 1_000
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "many.db")
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		input := 0
		at := time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)
		for first := 0; first < sessions; first += perTx {
			err := s.update(func(tx *Tx) error {
				for i := first; i < first+perTx; i++ {
					id := fmt.Sprintf("0000p4wp%08x", i)
					q := "question " + strconv.Itoa(i) + ": " + lorem[i%32:i%32+38]
					a := "answer " + strconv.Itoa(i) + ": " + lorem[i%64:i%64+40]
					input += len(q) + len(a)
					info := model.Session{ID: id, Title: q, CreatedAt: at, Source: "sharegpt", MessageCount: 2}
					var msgs []model.Message
					for j, c := range []string{q, a} {
						role := model.RoleUser
						if j == 1 {
							role = model.RoleAssistant
						}
						m := model.Message{Seq: uint64(j + 1), ID: model.MessageID(uint64(j + 1)), Role: role, Content: c,
							CreatedAt: at, Tokens: len(c) / 4, Digest: model.ContentDigest(role, c)}
						info.Tokens += m.Tokens
						msgs = append(msgs, m)
					}
					info.Record(at, "operator", "2 messages imported")
					if err := tx.PutSession(info); err != nil {
						return err
					}
					if err := tx.AppendMessages(id, msgs); err != nil {
						return err
					}
					src := fmt.Sprintf("sharegpt:conv-%d", i)
					for _, m := range msgs {
						k := fmt.Sprintf("%s\x00%010d:%s", src, m.Seq, m.Digest[:12])
						if err := tx.PutImportKey(id, k, m.Seq); err != nil {
							return err
						}
					}
					if err := tx.PutSourceSession(src, id); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/float64(input), "file-bytes/input-byte")
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	}
}

// BenchmarkTimeAscend1M finds the first message at or after a random time
// in a 1M-message session: a seek in the time index.
func BenchmarkTimeAscend1M(b *testing.B) {
	s := buildSession(b, 1_000_000)
	r := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		from := time.Unix(1_700_000_000+int64(r.IntN(1_000_000)), 0)
		err := s.view(func(tx *Tx) error {
			return tx.TimeAscend("s", from, func(uint64, int64) bool { return false })
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
