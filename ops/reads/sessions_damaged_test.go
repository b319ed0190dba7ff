package reads_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/store"
)

// breakOp overwrites the stored record of one operation (found by its ID
// in the ops bucket) with bytes that are not an operation.
func breakOp(t *testing.T, path, opID string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("ops"))
		var k []byte
		b.ForEach(func(key, v []byte) error {
			var op model.Op
			if json.Unmarshal(v, &op) == nil && op.ID == opID {
				k = append([]byte(nil), key...)
			}
			return nil
		})
		if k == nil {
			t.Fatalf("op %s is not in the file", opID)
		}
		return b.Put(k, []byte(`{"id": broken`))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOneDamagedSessionLeavesTheOthers: one corrupt operation record in
// one of two sessions. list_sessions still lists both (the damaged one
// marked unreadable, with the reason); the other session reads and
// exports; the damaged one says what is wrong.
func TestOneDamagedSessionLeavesTheOthers(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	bad := f.Session("damaged", 4)
	good := f.Session("sound", 4)
	lost := f.Session("lost record", 2)
	var opIDs []string
	for _, sid := range []string{bad, good} {
		res, err := f.Svc.TagMessages(ctx, ops.TagArgs{Selection: ops.Selection{SessionID: sid, IDs: []model.ItemID{"m1"}}, Tags: []string{"t"}})
		if err != nil {
			t.Fatal(err)
		}
		opIDs = append(opIDs, res.OperationID)
	}
	f.St.Close()
	breakOp(t, f.Path, opIDs[0])
	db, err := bolt.Open(f.Path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("sessions")).Put([]byte(lost), []byte{1}) })
	db.Close()
	f.Open()

	list, err := reads.ListSessions(f.Svc, ctx, reads.ListSessionsArgs{})
	if err != nil {
		t.Fatalf("list_sessions: %v", err)
	}
	if list.Total != 3 || len(list.Sessions) != 3 {
		t.Fatalf("list_sessions lists %d of %d sessions", len(list.Sessions), list.Total)
	}
	if last := list.Sessions[2]; last.SessionID != lost || !strings.Contains(last.Unreadable, "session record") {
		t.Errorf("the session whose record is lost is listed as %+v", last)
	}
	for _, s := range list.Sessions {
		switch s.SessionID {
		case bad:
			if !strings.Contains(s.Unreadable, "corrupt record") || s.Title != "damaged" || s.MessageCount != 4 || s.EffectiveTokens != nil {
				t.Errorf("the damaged session is listed as %+v", s)
			}
		case good:
			if s.Unreadable != "" || s.EffectiveTokens == nil {
				t.Errorf("the sound session is listed as %+v", s)
			}
		}
	}
	if _, v, err := f.Svc.View(good); err != nil || v.Len() != 4 {
		t.Errorf("the sound session's view: %v", err)
	}
	if _, items, err := f.Svc.ExportItems(good, false); err != nil || len(items) != 4 {
		t.Errorf("exporting the sound session: %d items, %v", len(items), err)
	}
	if exp, err := f.Svc.ExportWeft(good); err != nil || len(exp.Ops) != 1 {
		t.Errorf("exporting the sound session as weft: %v", err)
	}
	_, _, err = f.Svc.View(bad)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), f.Path) || !strings.Contains(err.Error(), bad) {
		t.Errorf("reading the damaged session: %v", err)
	}
}
