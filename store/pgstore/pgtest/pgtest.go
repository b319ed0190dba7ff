// Package pgtest gives tests an empty PostgreSQL database of their own on
// the server $WEFT_TEST_POSTGRES names (read by the test), or skips
// them, saying so.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// ServerEnv names a PostgreSQL server the tests may make databases on
// (postgres://…, a user who may CREATE DATABASE). .ci/postgres starts a
// throwaway cluster and sets it.
const ServerEnv = "WEFT_TEST_POSTGRES"

var made atomic.Int64

// FreshDB makes an empty database for one test on server (the test reads
// $WEFT_TEST_POSTGRES), dropped after it, and returns its URL. Without a
// server the test is skipped, saying so.
func FreshDB(t testing.TB, server string) string {
	t.Helper()
	if server == "" {
		t.Skipf("no PostgreSQL server: set %s=postgres://… (.ci/postgres starts a throwaway cluster and runs these tests)", ServerEnv)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("%s: %v", ServerEnv, err)
	}
	name := fmt.Sprintf("weft_test_%d_%d", os.Getpid(), made.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close(ctx)
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
