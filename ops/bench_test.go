package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/benchdata"
	"weft/model"
	"weft/store"
)

// Benchmarks over real files. Building a big file takes a while, so each
// is built once per run, in a directory removed when the run ends (see
// TestMain).

// text makes deterministic prose of about n bytes (benchdata.Prose).
var text = benchdata.Prose

var benchDir = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "weft-bench-")
	if err != nil {
		panic(err)
	}
	return d
})

func TestMain(m *testing.M) {
	code := m.Run()
	if benchFilesBuilt() {
		os.RemoveAll(benchDir())
	}
	os.Exit(code)
}

var benchFiles sync.Map // name -> path

func benchFilesBuilt() bool {
	built := false
	benchFiles.Range(func(any, any) bool { built = true; return false })
	return built
}

// benchFile builds (once per run) a file with one session of n messages of
// about size bytes, one a second, and nops operations made as an operator
// would, and returns its path and the session ID.
func benchFile(b *testing.B, n, size, nops int) (string, string) {
	name := fmt.Sprintf("%d-%d-%d", n, size, nops)
	if v, ok := benchFiles.Load(name); ok {
		p := v.([2]string)
		return p[0], p[1]
	}
	b.Logf("building a %d-message file (once per run)", n)
	path := filepath.Join(benchDir(), name+".db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	info := model.Session{ID: "bench", Title: "bench", CreatedAt: t0, UpdatedAt: t0}
	for seq := 1; seq <= n; {
		batch := make([]model.Message, 0, 50_000)
		for ; seq <= n && len(batch) < cap(batch); seq++ {
			role := model.RoleUser
			if seq%2 == 0 {
				role = model.RoleAssistant
			}
			content := text(r, size)
			batch = append(batch, model.Message{
				ID: model.MessageID(uint64(seq)), Seq: uint64(seq), Role: role, Content: content,
				CreatedAt: t0.Add(time.Duration(seq) * time.Second), Tokens: size / 4,
				Digest: model.ContentDigest(role, content),
			})
		}
		info.MessageCount += len(batch)
		info.Tokens += len(batch) * size / 4
		err := st.Update(func(tx *store.Tx) error {
			if err := tx.PutSession(info); err != nil {
				return err
			}
			return tx.AppendMessages(info.ID, batch)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if nops > 0 {
		ops := benchdata.Ops(n, nops)
		err := st.Update(func(tx *store.Tx) error {
			for _, o := range ops {
				if err := tx.PutOp(info.ID, o); err != nil {
					return err
				}
			}
			info.OpCount = len(ops)
			info.Version = 1
			return tx.PutSession(info)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	benchFiles.Store(name, [2]string{path, info.ID})
	return path, info.ID
}

func benchService(b *testing.B, path string) *Service {
	st, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st)
}

// BenchmarkOpenLastScreen1M is opening a file and reading the last screen
// (50 items) of a 1M-message session with 10k operations, from cold.
func BenchmarkOpenLastScreen1M(b *testing.B) {
	path, sid := benchFile(b, 1_000_000, 200, 10_000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		st, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		svc := New(st)
		_, v, err := svc.View(sid)
		if err != nil {
			b.Fatal(err)
		}
		end := v.Len() - 1
		start := end - 49
		res, err := svc.GetMessageRange(ctx, MessageRangeArgs{SessionID: sid, StartIdx: &start, EndIdx: &end})
		if err != nil || len(res.Messages) != 50 {
			b.Fatal(err, len(res.Messages))
		}
		st.Close()
	}
}

// BenchmarkTurnsAround1M is get_turns_around (count 40) on a warm
// 1M-message session: the time index, not a scan.
func BenchmarkTurnsAround1M(b *testing.B) {
	path, sid := benchFile(b, 1_000_000, 200, 10_000)
	svc := benchService(b, path)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 5))
	if _, _, err := svc.View(sid); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		ts := t0.Add(time.Duration(r.IntN(1_000_000)) * time.Second).Format(time.RFC3339)
		res, err := svc.GetTurnsAround(ctx, TurnsAroundArgs{SessionID: sid, Timestamp: ts})
		if err != nil || res.TotalCount != 40 {
			b.Fatal(err, res.TotalCount)
		}
	}
}

// BenchmarkSearchSubstring100k is a substring search over 100k messages of
// about 650 bytes (65 MB of text), for a word that occurs and one that
// does not, after a first search.
func BenchmarkSearchSubstring100k(b *testing.B) {
	path, sid := benchFile(b, 100_000, 650, 0)
	svc := benchService(b, path)
	ctx := context.Background()
	// The first search keeps the session's text in memory, lower-cased;
	// what is measured is every search after it.
	t0 := time.Now()
	if _, err := svc.SearchSessionHistory(ctx, SearchArgs{SessionID: sid, Query: "warm"}); err != nil {
		b.Fatal(err)
	}
	b.Logf("first search: %v", time.Since(t0))
	for _, q := range []string{"Migration Plan", "no such phrase"} {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if _, err := svc.SearchSessionHistory(ctx, SearchArgs{SessionID: sid, Query: q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendOne1M is appending one message to a warm 1M-message
// session and getting the new view: one bbolt commit, no re-apply.
func BenchmarkAppendOne1M(b *testing.B) {
	path, sid := benchFile(b, 1_000_000, 200, 10_000)
	// Work on a copy: appends change the file.
	cp := filepath.Join(b.TempDir(), "append.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cp, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	svc := benchService(b, cp)
	ctx := context.Background()
	if _, _, err := svc.View(sid); err != nil {
		b.Fatal(err)
	}
	msg := []model.NewMessage{{Role: model.RoleUser, Content: "one more", Tokens: 2}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.AppendMessages(ctx, AppendMessagesArgs{SessionID: sid, Messages: msg}); err != nil {
			b.Fatal(err)
		}
		if _, v, _ := svc.View(sid); v.Len() == 0 {
			b.Fatal("empty view")
		}
	}
}

// BenchmarkSearchFirst is the first search of a session, which reads its
// stored messages once into the text kept for searches (fuzzy.Corpus),
// on the benchmark files of 100k and 1M messages (page cache warm after
// the first op). MB-text is the text kept.
func BenchmarkSearchFirst(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(benchdata.Label(n), func(b *testing.B) {
			st, err := store.Open(benchdata.DB(b, n), store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			var text int
			for b.Loop() {
				b.StopTimer()
				svc := New(st) // nothing kept from the last op
				sessions, err := svc.ListSessions(ctx, ListSessionsArgs{})
				if err != nil || len(sessions.Sessions) == 0 {
					b.Fatal(err, "no session")
				}
				sid := sessions.Sessions[0].SessionID
				if _, _, err := svc.View(sid); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := svc.SearchSessionHistory(ctx, SearchArgs{SessionID: sid, Query: "no such phrase"}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c, err := svc.corpus(sid, 0)
				if err != nil {
					b.Fatal(err)
				}
				text = c.Bytes()
				b.StartTimer()
			}
			b.ReportMetric(float64(text)/1e6, "MB-text")
		})
	}
}
