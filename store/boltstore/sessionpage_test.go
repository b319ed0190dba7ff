package boltstore

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"weft/store/record"
)

func TestSessionsBeforePagesThroughEveryID(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	var want []string
	for i := range 25 {
		id := fmt.Sprintf("id%02d", i)
		putSession(t, s, id)
		want = append(want, id)
	}
	slices.Reverse(want)
	// A record that cannot be read keeps its place, with why.
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bktSessions).Put([]byte("id07"), []byte{record.Format1, 0, 0, 0, 8, 0xff})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	before, pages := "", 0
	for {
		var page []SessionEntry
		var more bool
		mustView(t, s, func(tx *Tx) error { page, more = tx.SessionsBefore(before, 10); return nil })
		pages++
		for _, e := range page {
			got = append(got, e.ID)
			var ce *CorruptError
			if bad := e.ID == "id07"; bad != (e.Err != nil) || bad && (!errors.As(e.Err, &ce) || ce.Session != "id07") || !bad && e.Session.Title != "title of "+e.ID {
				t.Errorf("%s: %+v", e.ID, e)
			}
		}
		if !more {
			break
		}
		before = page[len(page)-1].ID
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Errorf("%d pages of %v, want 3 of %v", pages, got, want)
	}
	// A page may start at an ID that is no longer there.
	mustView(t, s, func(tx *Tx) error {
		if page, more := tx.SessionsBefore("id105", 2); len(page) != 2 || page[0].ID != "id10" || page[1].ID != "id09" || !more {
			t.Errorf("before a missing ID: %+v, %v", page, more)
		}
		if page, more := tx.SessionsBefore("id00", 5); len(page) != 0 || more {
			t.Errorf("before the first: %+v, %v", page, more)
		}
		return nil
	})
}
