package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/openai"
	"weft/model"
	"weft/ops/opstest"
	"weft/store"
)

// The digest an import stores is model.ContentDigest of each message,
// whether its reader hashed the message already (OpenAI's lines, fast
// path and general way) or the import hashes it (a thread fed without).
func TestImportStoresContentDigests(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	lines := strings.Join([]string{
		`{"role":"system","content":"be brief"}`,
		`{"role":"user","content":"hi \u00e9"}`,
		`{"content":"hello","role":"assistant","extra":1}`,
		`{"role":"user","content":[{"type":"text","text":"two"},{"type":"text","text":"parts"}]}`,
	}, "\n")
	im := New(ctx, f.Svc, Options{})
	if _, err := openai.Read(strings.NewReader(lines), im); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im)
	fed := New(ctx, f.Svc, Options{})
	if err := feed(fed, formats.ThreadInfo{Key: "fed", Source: formats.ClaudeCode}, 3, [2]int{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(im.Sessions, fed.Sessions...) {
		n := 0
		err := f.St.View(func(tx store.Tx) error {
			return tx.Messages(s.SessionID, 1, 1<<20, func(m model.Message) error {
				n++
				if want := model.ContentDigest(m.Role, m.Content); m.Digest != want {
					t.Errorf("%s m%d (%s %q): digest %s, want %s", s.SessionID, m.Seq, m.Role, m.Content, m.Digest, want)
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != s.Added || n == 0 {
			t.Errorf("%s: %d messages read, %d added", s.SessionID, n, s.Added)
		}
	}
}

// A file imported in many batches into the session its first batch
// made (whose later batches look up no import key: fresh), then again,
// and then grown: every message once, in the file's order, the second
// import adding nothing and the third only what is new.
func TestImportInBatchesIntoItsOwnSession(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	file := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"role":"user","content":"line %d"}`+"\n", i%7) // repeated contents
		}
		return b.String()
	}
	run := func(n int) ImportedSession {
		im := New(ctx, f.Svc, Options{})
		im.batchSize = 4
		if _, err := openai.Read(strings.NewReader(file(n)), im); err != nil {
			t.Fatal(err)
		}
		mustClose(t, im)
		if len(im.Sessions) != 1 {
			t.Fatalf("%d sessions", len(im.Sessions))
		}
		return im.Sessions[0]
	}
	if s := run(23); !s.Created || s.Added != 23 || s.Skipped != 0 {
		t.Fatalf("first import: %+v", s)
	}
	if s := run(23); s.Created || s.Added != 0 || s.Skipped != 23 {
		t.Fatalf("again: %+v", s)
	}
	s := run(30)
	if s.Added != 7 || s.Skipped != 23 {
		t.Fatalf("grown: %+v", s)
	}
	var got []string
	err := f.St.View(func(tx store.Tx) error {
		return tx.Messages(s.SessionID, 1, 1<<20, func(m model.Message) error {
			got = append(got, m.Content)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(strings.NewReplacer(`{"role":"user","content":"`, "", `"}`, "").Replace(file(30))), "\n")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored %q, want %q", got, want)
	}
}
