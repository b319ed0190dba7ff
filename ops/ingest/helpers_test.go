package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"weft/ops"
	"weft/ops/opstest"
)

// call runs a request of the service with JSON arguments, read as every
// face reads them (an unknown argument is an error). The registry, which
// calls the tools by name, imports this package: its tests cannot.
func call[A, R any](f *opstest.Fixture, method func(*ops.Service, context.Context, A) (R, error), args string) R {
	f.T.Helper()
	var a A
	dec := json.NewDecoder(bytes.NewReader([]byte(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		f.T.Fatalf("arguments %s: %v", args, err)
	}
	res, err := method(f.Svc, context.Background(), a)
	if err != nil {
		f.T.Fatalf("%s: %v", args, err)
	}
	return res
}

// mustClose finishes an import: what it still holds is written.
func mustClose(tb testing.TB, im *Import) {
	tb.Helper()
	if err := im.Close(); err != nil {
		tb.Fatal(err)
	}
}
