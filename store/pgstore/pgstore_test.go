package pgstore

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"weft/store"
	"weft/store/storetest"
)

// serverEnv names a PostgreSQL server the tests may make databases on
// (postgres://…, a user who may CREATE DATABASE). .ci/postgres starts a
// throwaway cluster and sets it.
const serverEnv = "WEFT_TEST_POSTGRES"

var made atomic.Int64

// freshDB makes an empty database for one test on the server, dropped
// after it, and returns its URL. Without a server the test is skipped,
// saying so.
func freshDB(t *testing.T) string { return FreshDB(t) }

// FreshDB is freshDB for the package's external tests.
func FreshDB(t *testing.T) string {
	t.Helper()
	server := os.Getenv(serverEnv)
	if server == "" {
		t.Skipf("no PostgreSQL server: set %s=postgres://… (.ci/postgres starts a throwaway cluster and runs these tests)", serverEnv)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("%s: %v", serverEnv, err)
	}
	name := fmt.Sprintf("weft_test_%d_%d", os.Getpid(), made.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(ctx)
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// PostgreSQL passes the store's conformance suite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), freshDB(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
