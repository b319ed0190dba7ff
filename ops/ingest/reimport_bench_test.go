package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"weft/formats/claudecode"
	"weft/ops"
	"weft/store/boltstore"
)

// A batch of weft import --follow imports the whole file again, its
// messages already there: what that costs on a real 3 MB session.
func BenchmarkReimportNothingNew(b *testing.B) {
	data, err := os.ReadFile("../../formats/testdata/claude-code/spotter_long_session.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "reimport.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := ops.New(st)
	reimport := func() ImportedSession {
		im := New(context.Background(), svc, Options{})
		if _, err := claudecode.Read(bytes.NewReader(data), im); err != nil {
			b.Fatal(err)
		}
		if err := im.Close(); err != nil {
			b.Fatal(err)
		}
		return im.Sessions[0]
	}
	reimport()
	for b.Loop() {
		if s := reimport(); s.Added != 0 {
			b.Fatalf("%d messages added again", s.Added)
		}
	}
}
