package ops

import (
	"context"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/openai"
	"weft/model"
	"weft/store"
)

// The digest an import stores is model.ContentDigest of each message,
// whether its reader hashed the message already (OpenAI's lines, fast
// path and general way) or the import hashes it (a thread fed without).
func TestImportStoresContentDigests(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	lines := strings.Join([]string{
		`{"role":"system","content":"be brief"}`,
		`{"role":"user","content":"hi \u00e9"}`,
		`{"content":"hello","role":"assistant","extra":1}`,
		`{"role":"user","content":[{"type":"text","text":"two"},{"type":"text","text":"parts"}]}`,
	}, "\n")
	im := f.svc.NewImport(ctx, ImportOptions{})
	if _, err := openai.Read(strings.NewReader(lines), im); err != nil {
		t.Fatal(err)
	}
	mustCloseT(t, im)
	fed := f.svc.NewImport(ctx, ImportOptions{})
	if err := feed(fed, formats.ThreadInfo{Key: "fed", Source: formats.ClaudeCode}, 3, [2]int{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(im.Sessions, fed.Sessions...) {
		n := 0
		err := f.svc.st.View(func(tx *store.Tx) error {
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

func mustCloseT(t *testing.T, im *Import) {
	t.Helper()
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
}
