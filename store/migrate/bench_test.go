package migrate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"weft/internal/benchdata"
	"weft/ops/thread"
	"weft/store"
	"weft/store/boltstore"
	"weft/store/migrate"
	"weft/store/pgstore"
	"weft/store/pgstore/pgtest"
)

// benchMessages is the size of the benchmarks' session.
const benchMessages = 20000

// benchCopy copies a file of one session of benchMessages messages (of
// about 600 bytes, with 50 operations) into a fresh store that open
// makes, verifying it, each iteration.
func benchCopy(b *testing.B, open func(b *testing.B) store.Store) {
	path, _ := benchdata.File(b, t0, benchMessages, 600, 50)
	src, err := boltstore.Open(path, boltstore.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = src.Close() }()
	for b.Loop() {
		b.StopTimer()
		dst := open(b)
		b.StartTimer()
		res, err := migrate.Copy(context.Background(), src, dst, migrate.Options{Thread: thread.Signature})
		if err != nil || res.Messages != benchMessages {
			b.Fatalf("%+v %v", res, err)
		}
		b.StopTimer()
		_ = dst.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchMessages)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkMigrateFileToFile(b *testing.B) {
	benchCopy(b, func(b *testing.B) store.Store {
		s, err := boltstore.Open(filepath.Join(b.TempDir(), "to.db"), boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}

func BenchmarkMigratePostgres(b *testing.B) {
	benchCopy(b, func(b *testing.B) store.Store {
		s, err := pgstore.Open(context.Background(), pgtest.FreshDB(b, os.Getenv(pgtest.ServerEnv)))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
