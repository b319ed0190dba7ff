package mcpserver

import (
	"context"
	"os"
	"testing"

	"weft/ops"
	"weft/store/pgstore"
	"weft/store/pgstore/pgtest"
)

// TestPostgresConcurrentEditsOverTwoWefts: the clients of
// TestConcurrentEditsOverHTTP, spread over two wefts on one PostgreSQL
// database (two services, each with its own connections and cache, as
// two weft serve processes): none lost, none misapplied, expected_version
// holding across them, and each weft's subscribers hearing every edit.
func TestPostgresConcurrentEditsOverTwoWefts(t *testing.T) {
	url := pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv))
	edits := concEdits
	if testing.Short() {
		edits = concEditsShort
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var svcs []*ops.Service
	var first *pgstore.Store
	for range 2 {
		st, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if first == nil {
			first = st
		}
		svc := ops.New(st)
		go svc.FollowStore(ctx)
		svcs = append(svcs, svc)
	}
	runConcurrentEdits(t, first, svcs, edits)
}
