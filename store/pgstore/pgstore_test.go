package pgstore

import (
	"context"
	"errors"
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
