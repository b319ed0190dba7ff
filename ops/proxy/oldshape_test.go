package proxy

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"weft/model"
	"weft/store"
	"weft/store/boltstore"
)

// A session the proxy stored before a message of a string became plain
// text (its first message with a text part and its source block, the
// string as the client wrote it) is continued by the next request as
// any other: a string is the same message with a part or without.
func TestProxyContinuesASessionStoredWithTextParts(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "weft.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	old := []model.Message{
		{ID: model.MessageID(1), Seq: 1, Role: model.RoleUser, Content: "Find the TODOs", CreatedAt: at, Tokens: 4,
			Parts:  []byte(`[{"type":"text","text":"Find the TODOs","raw":"\"Find the TODOs\""}]`),
			Digest: model.ContentDigest(model.RoleUser, "Find the TODOs")},
		{ID: model.MessageID(2), Seq: 2, Role: model.RoleAssistant, Content: "Done.", CreatedAt: at.Add(time.Second), Tokens: 2,
			Parts:  []byte(`[{"type":"text","text":"Done.","raw":{"type":"text","text":"Done."}}]`),
			Digest: model.ContentDigest(model.RoleAssistant, "Done.")},
	}
	err = st.Update(func(tx store.Tx) error {
		info := model.Session{ID: "old", Title: "Find the TODOs", CreatedAt: at, UpdatedAt: at, Source: Source, MessageCount: 2}
		if err := tx.PutSession(info); err != nil {
			return err
		}
		return tx.AppendMessages("old", old)
	})
	if err != nil {
		t.Fatal(err)
	}
	rig := newProxyRig(t, rigOptions{Store: st})
	resp, got := rig.post("/v1/messages", anBody(false,
		`{"role":"user","content":"Find the TODOs"}`,
		`{"role":"assistant","content":[{"type":"text","text":"Done."}]}`,
		`{"role":"user","content":"Which files?"}`), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	if sid := resp.Header.Get(SessionHeader); sid != "old" {
		t.Fatalf("the request went to session %q, not the one it continues", sid)
	}
	rig.messages("old", 4) // the new question and its answer after the two
	if n := rig.sessions(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}
