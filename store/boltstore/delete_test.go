package boltstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"weft/model"
)

// Deleting a session leaves nothing of it, and everything of the others:
// the file then checks clean.
func TestDeleteSession(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	for _, id := range []string{"keep", "gone", "after"} {
		putSession(t, s, id)
		mustUpdate(t, s, func(tx *Tx) error {
			var msgs []model.Message
			for seq := uint64(1); seq <= 1100; seq++ { // past one heads chunk
				msgs = append(msgs, msg(seq, model.RoleUser, fmt.Sprintf("%s %d", id, seq), t0.Add(time.Duration(1100-seq)*time.Second)))
			}
			if err := tx.AppendMessages(id, msgs); err != nil {
				return err
			}
			if err := tx.PutOp(id, model.Op{ID: "op-" + id, Type: model.OpTag, Targets: []model.ItemID{"m1"}, Active: true}); err != nil {
				return err
			}
			if err := tx.PutImportKey(id, "k", 1); err != nil {
				return err
			}
			if err := tx.PutPrefs(id, []byte("x")); err != nil {
				return err
			}
			if err := tx.PutSourceSession("openai:"+id, id); err != nil {
				return err
			}
			return tx.PutSession(model.Session{ID: id, Title: id, CreatedAt: t0, UpdatedAt: t0, MessageCount: 1100, OpCount: 1})
		})
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.DeleteSession("gone") })
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Session("gone"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the deleted session is still there: %v", err)
		}
		if _, err := tx.OpSession("op-gone"); !errors.Is(err, ErrNotFound) {
			t.Errorf("its operation is still indexed: %v", err)
		}
		if sid, ok := tx.SourceSession("openai:gone"); ok {
			t.Errorf("its source still leads to %s", sid)
		}
		for _, id := range []string{"keep", "after"} {
			heads, err := tx.Heads(id)
			if err != nil || len(heads) != 1100 {
				t.Errorf("%s: %d heads, %v", id, len(heads), err)
			}
			if m, err := tx.Message(id, 1100); err != nil || m.Content != id+" 1100" {
				t.Errorf("%s: last message %q, %v", id, m.Content, err)
			}
			if ops, err := tx.Ops(id); err != nil || len(ops) != 1 {
				t.Errorf("%s: %d ops, %v", id, len(ops), err)
			}
			n := 0
			if err := tx.TimeAscend(id, t0.Add(-time.Hour), func(uint64, int64) bool { n++; return true }); err != nil || n != 1100 {
				t.Errorf("%s: time index has %d, %v", id, n, err)
			}
		}
		return nil
	})
	s.Close()
	findings, err := Check(path)
	if err != nil || len(findings) != 0 {
		t.Fatalf("check after the delete: %v, %v", findings, err)
	}
}
