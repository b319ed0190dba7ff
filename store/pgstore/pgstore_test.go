package pgstore

import (
	"context"
	"os"
	"testing"

	"weft/store"
	"weft/store/pgstore/pgtest"
	"weft/store/storetest"
)

// PostgreSQL passes the store's conformance suite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
