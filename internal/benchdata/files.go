package benchdata

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"weft/model"
	"weft/store"
	"weft/store/boltstore"
)

// The engine's benchmarks run over plain files of one session of
// prose, built once per test binary in a temporary directory that
// RemoveTemp removes when the run ends.

// TempDir is the run's directory for files built by benchmarks.
var TempDir = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "weft-bench-")
	if err != nil {
		panic(err)
	}
	return d
})

var files sync.Map // name -> [path, session ID]

// RemoveTemp removes the run's directory if a file was built in it.
func RemoveTemp() {
	built := false
	files.Range(func(any, any) bool { built = true; return false })
	if built {
		_ = os.RemoveAll(TempDir())
	}
}

// File builds (once per run) a file with one session of n messages of
// about size bytes, one a second from t0, and nops operations made as an
// operator would, and returns its path and the session ID.
func File(tb testing.TB, t0 time.Time, n, size, nops int) (string, string) {
	name := fmt.Sprintf("%d-%d-%d", n, size, nops)
	if v, ok := files.Load(name); ok {
		p := v.([2]string)
		return p[0], p[1]
	}
	tb.Logf("building a %d-message file (once per run)", n)
	path := filepath.Join(TempDir(), name+".db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	id := Seed(tb, st, "bench", t0, n, size, nops)
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
	files.Store(name, [2]string{path, id})
	return path, id
}

// Seed writes into st, whatever its backend, a session of ID id with n
// messages of about size bytes, one a second from t0, and nops
// operations made as an operator would (their IDs are the same in every
// seeded session: one such session per store), 50,000 messages a
// transaction, and returns its ID.
func Seed(tb testing.TB, st store.Store, id string, t0 time.Time, n, size, nops int) string {
	tb.Helper()
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	info := model.Session{ID: id, Title: "bench", CreatedAt: t0, UpdatedAt: t0}
	for seq := 1; seq <= n; {
		batch := make([]model.Message, 0, min(50_000, n))
		for ; seq <= n && len(batch) < cap(batch); seq++ {
			role := model.RoleUser
			if seq%2 == 0 {
				role = model.RoleAssistant
			}
			content := Prose(r, size)
			batch = append(batch, model.Message{
				ID: model.MessageID(uint64(seq)), Seq: uint64(seq), Role: role, Content: content,
				CreatedAt: t0.Add(time.Duration(seq) * time.Second), Tokens: size / 4,
				Digest: model.ContentDigest(role, content),
			})
		}
		info.MessageCount += len(batch)
		info.Tokens += len(batch) * size / 4
		err := st.Update(func(tx store.Tx) error {
			if err := tx.PutSession(info); err != nil {
				return err
			}
			return tx.AppendMessages(info.ID, batch)
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if nops > 0 {
		ops := Ops(n, nops)
		err := st.Update(func(tx store.Tx) error {
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
			tb.Fatal(err)
		}
	}
	return info.ID
}
