package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/internal/benchdata"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/store"
	"weft/store/boltstore"
	"weft/store/pgstore"
	"weft/store/pgstore/pgtest"
)

// The Service's interactive calls on PostgreSQL beside the bbolt file,
// on the same machine in one run: each operation runs on bolt, then on
// postgres, and the postgres line gives the ratio of the two medians.
//
//	WEFT_TEST_POSTGRES=postgres://… go test ./store/pgstore -run XXX -bench Stores -benchtime 200x
//
// Without a server the postgres side is skipped, saying so; the bolt
// side still runs.

// t0 is when the benchmarks' threads begin.
var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// threadSize is the messages of the sessions edited and read (2,000), and
// bigSize those of the one opened (100,000); messages of about
// messageBytes each.
const (
	threadSize   = 2_000
	bigSize      = 100_000
	bigOps       = 100
	messageBytes = 650
)

// benchStore is one backend's store, seeded as the operations need it.
type benchStore struct {
	name     string
	st       store.Store
	url      string // the database's, for postgres
	big      string // the 100,000-message session, once seeded
	vacuumed bool
}

// storeOp is one operation measured on each backend: run does it once
// (fresh sessions made with b's timer stopped) and returns how long it
// took.
type storeOp struct {
	name  string
	setup func(b *testing.B, bs *benchStore) func(b *testing.B) time.Duration
}

func BenchmarkStores(b *testing.B) {
	backends := []*benchStore{{name: "bolt"}, {name: "postgres"}}
	bolt, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bolt.Close() })
	backends[0].st = bolt
	if server := os.Getenv(pgtest.ServerEnv); server != "" {
		url := pgtest.FreshDB(b, server)
		pg, err := pgstore.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = pg.Close() })
		backends[1].st, backends[1].url = pg, url
	}
	for _, op := range []storeOp{
		{"append", benchAppend},
		{"digest10", benchDigest},
		{"range40", benchRange},
		{"open100k-imported", openBench(false)},
		{"open100k", openBench(true)},
	} {
		b.Run(op.name, func(b *testing.B) {
			var boltP50, boltP90 float64
			for _, bs := range backends {
				b.Run(bs.name, func(b *testing.B) {
					if bs.st == nil {
						b.Skipf("no PostgreSQL server: set %s=postgres://… to measure it beside bolt", pgtest.ServerEnv)
					}
					once := op.setup(b, bs)
					durs := make([]time.Duration, 0, b.N)
					for b.Loop() {
						durs = append(durs, once(b))
					}
					p50, p90 := percentiles(durs)
					b.ReportMetric(p50, "ms-p50")
					b.ReportMetric(p90, "ms-p90")
					if bs.name == "bolt" {
						boltP50, boltP90 = p50, p90
					} else if boltP50 > 0 {
						b.ReportMetric(p50/boltP50, "x-bolt-p50")
						b.ReportMetric(p90/boltP90, "x-bolt-p90")
					}
				})
			}
		})
	}
}

// percentiles are the median and 90th percentile of durs, in ms.
func percentiles(durs []time.Duration) (p50, p90 float64) {
	slices.Sort(durs)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(durs[len(durs)/2]), ms(durs[len(durs)*9/10])
}

// timed is how long fn took, failing b on its error.
func timed(b *testing.B, fn func() error) time.Duration {
	start := time.Now()
	err := fn()
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// thread makes, through svc, a session of threadSize messages of prose,
// and reads it once so the service has it cached, as a running weft does.
func thread(b *testing.B, svc *ops.Service, seed uint64) string {
	b.Helper()
	ctx := context.Background()
	created, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: fmt.Sprintf("bench %d", seed)})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, messageBytes))
	msgs := make([]model.NewMessage, threadSize)
	for i := range msgs {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		msgs[i] = model.NewMessage{Role: role, Content: benchdata.Prose(r, messageBytes), CreatedAt: t0.Add(time.Duration(i) * time.Second)}
	}
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: created.SessionID, Messages: msgs}); err != nil {
		b.Fatal(err)
	}
	if _, _, err := svc.View(created.SessionID); err != nil {
		b.Fatal(err)
	}
	return created.SessionID
}

// benchAppend appends one message to a 2,000-message session (a
// thousand more over 200 runs change nothing that matters).
func benchAppend(b *testing.B, bs *benchStore) func(*testing.B) time.Duration {
	svc := ops.New(bs.st)
	sid := thread(b, svc, 1)
	ctx := context.Background()
	msg := []model.NewMessage{{Role: model.RoleUser, Content: "one more question about the migration plan", Tokens: 9}}
	return func(b *testing.B) time.Duration {
		return timed(b, func() error {
			_, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: msg})
			return err
		})
	}
}

// digestsPerThread is how many digests of 10 are made in one
// 2,000-message session before the next is taken: the k-th digests
// items k..k+9, each digest leaving 9 fewer items.
const digestsPerThread = 150

// benchDigest digests 10 items of a 2,000-message session: the next
// ten after the digests made before.
func benchDigest(b *testing.B, bs *benchStore) func(*testing.B) time.Duration {
	svc := ops.New(bs.st)
	ctx := context.Background()
	var sid string
	made, k := 0, digestsPerThread
	return func(b *testing.B) time.Duration {
		if k == digestsPerThread {
			b.StopTimer()
			made++
			sid, k = thread(b, svc, uint64(100+made)), 0
			b.StartTimer()
		}
		start, end := k, k+9
		k++
		return timed(b, func() error {
			_, err := svc.DigestMessages(ctx, ops.DigestArgs{
				Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end},
				Summary:   "Settled the migration plan: two steps, each behind a flag, with a retry and backoff.",
			})
			return err
		})
	}
}

// benchRange reads 40 items of a 2,000-message session with
// get_message_range, each run 40 further on.
func benchRange(b *testing.B, bs *benchStore) func(*testing.B) time.Duration {
	svc := ops.New(bs.st)
	sid := thread(b, svc, 2)
	ctx := context.Background()
	i := 0
	return func(b *testing.B) time.Duration {
		start := (i * 40) % (threadSize - 40)
		end := start + 39
		i++
		return timed(b, func() error {
			res, err := reads.GetMessageRange(svc, ctx, reads.MessageRangeArgs{SessionID: sid, StartIdx: &start, EndIdx: &end})
			if err == nil && len(res.Messages) != 40 {
				err = fmt.Errorf("get_message_range %d..%d gave %d messages", start, end, len(res.Messages))
			}
			return err
		})
	}
}

// openBench opens a 100,000-message session with 100 operations as the
// TUI's first load does: a fresh service over the open store, its first
// snapshot (the record, every message's head, the operations, the view
// applied). atRest: on PostgreSQL, after VACUUM ANALYZE, as autovacuum
// leaves a table within a minute of many inserts; else just after the
// session was stored (a big import), before autovacuum has been
// through the new rows: no statistics, no page marked all-visible.
func openBench(atRest bool) func(b *testing.B, bs *benchStore) func(*testing.B) time.Duration {
	return func(b *testing.B, bs *benchStore) func(*testing.B) time.Duration {
		if !atRest && bs.vacuumed {
			b.Skip("the session was vacuumed already: run open100k-imported before open100k")
		}
		if bs.big == "" {
			start := time.Now()
			bs.big = benchdata.Seed(b, bs.st, "big", t0, bigSize, messageBytes, bigOps)
			b.Logf("%s: seeded %d messages in %v", bs.name, bigSize, time.Since(start).Round(time.Millisecond))
		}
		if atRest && bs.url != "" && !bs.vacuumed {
			vacuum(b, bs.url)
			bs.vacuumed = true
		}
		return openOnce(bs)
	}
}

// openOnce is one first load of the big session.
func openOnce(bs *benchStore) func(*testing.B) time.Duration {
	return func(b *testing.B) time.Duration {
		return timed(b, func() error {
			snap, err := ops.New(bs.st).Snapshot(bs.big)
			if err == nil && len(snap.Heads) != bigSize {
				err = fmt.Errorf("the snapshot has %d heads, want %d", len(snap.Heads), bigSize)
			}
			return err
		})
	}
}

// vacuum runs VACUUM ANALYZE on the database at url: what autovacuum
// does to a table within a minute of many inserts.
func vacuum(b *testing.B, url string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
}
