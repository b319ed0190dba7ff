package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"weft/model"
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

// TestMissingSession: every read and write of one session's rows finds
// a missing session not found, and an empty one empty, though a query
// that gives rows does not look the session up first.
func TestMissingSession(t *testing.T) {
	s, err := Open(context.Background(), pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(func(tx store.Tx) error { return tx.PutSession(model.Session{ID: "empty"}) }); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(tx store.Tx, id string) error{
		"LastSeq": func(tx store.Tx, id string) error { _, err := tx.LastSeq(id); return err },
		"Messages": func(tx store.Tx, id string) error {
			return tx.Messages(id, 1, 10, func(model.Message) error { return errors.New("a message of an empty session") })
		},
		"ScanContent": func(tx store.Tx, id string) error {
			return tx.ScanContent(id, func(uint64, []byte) bool { return true })
		},
		"Heads": func(tx store.Tx, id string) error { _, err := tx.Heads(id); return err },
		"TimeAscend": func(tx store.Tx, id string) error {
			return tx.TimeAscend(id, time.Time{}, func(uint64, int64) bool { return true })
		},
		"TimeAscend past 2262": func(tx store.Tx, id string) error {
			return tx.TimeAscend(id, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), func(uint64, int64) bool { return true })
		},
		"TimeSpan": func(tx store.Tx, id string) error { _, _, _, err := tx.TimeSpan(id); return err },
		"Ops":      func(tx store.Tx, id string) error { _, err := tx.Ops(id); return err },
		"Prefs":    func(tx store.Tx, id string) error { _, err := tx.Prefs(id); return err },
		"PutOp":    func(tx store.Tx, id string) error { return tx.PutOp(id, model.Op{ID: "op-" + id, Type: model.OpSnip}) },
	}
	for name, call := range calls {
		// Each in a transaction of its own: an error ends a PostgreSQL
		// transaction.
		err := s.Update(func(tx store.Tx) error { return call(tx, "nope") })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of a missing session: %v, want ErrNotFound", name, err)
		}
		if err := s.Update(func(tx store.Tx) error { return call(tx, "empty") }); err != nil {
			t.Errorf("%s of an empty session: %v", name, err)
		}
	}
	// An operation of another session is refused, and not as not found.
	if err := s.Update(func(tx store.Tx) error { return tx.PutSession(model.Session{ID: "other"}) }); err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx store.Tx) error { return tx.PutOp("other", model.Op{ID: "op-empty", Type: model.OpSnip}) })
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("storing another session's operation: %v, want a refusal", err)
	}
}

// TestReadAhead: in a read transaction, messages asked for one by one
// (in order, out of order, again, past the end) are what a write
// transaction, which reads none ahead, gives.
func TestReadAhead(t *testing.T) {
	s, err := Open(context.Background(), pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 150
	msgs := make([]model.Message, n)
	for i := range msgs {
		seq := uint64(i + 1)
		msgs[i] = model.Message{ID: model.MessageID(seq), Seq: seq, Role: model.RoleUser, Content: fmt.Sprintf("message %d", seq),
			CreatedAt: time.Unix(int64(seq), 0).UTC(), Tokens: 3, Meta: map[string]string{"k": fmt.Sprint(seq)}}
	}
	err = s.Update(func(tx store.Tx) error {
		if err := tx.PutSession(model.Session{ID: "a", MessageCount: n}); err != nil {
			return err
		}
		return tx.AppendMessages("a", msgs)
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []uint64
	for seq := uint64(1); seq <= n+2; seq++ { // on past the end
		order = append(order, seq)
	}
	order = append(order, 5, 6, 6, 9, 8, 9, 10, 11, 12, 149, 150, 151, 1, 2, 3)
	read := func(view func(func(store.Tx) error) error) []string {
		var out []string
		err := view(func(tx store.Tx) error {
			for _, seq := range order {
				m, err := tx.Message("a", seq)
				out = append(out, fmt.Sprintf("%d: %+v %v", seq, m, errors.Is(err, store.ErrNotFound)))
			}
			_, err := tx.Message("b", 1)
			out = append(out, fmt.Sprintf("another session: %v", errors.Is(err, store.ErrNotFound)))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ahead, alone := read(s.View), read(s.Update)
	for i := range alone {
		if ahead[i] != alone[i] {
			t.Errorf("read ahead: %s\nalone:      %s", ahead[i], alone[i])
		}
	}
}
