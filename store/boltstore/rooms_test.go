package boltstore

import (
	"errors"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/model"
)

func TestRoomSessions(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	in := []model.Session{
		{ID: "a", Title: "A", UpdatedAt: t0, Interface: "cli", Room: "general"},
		{ID: "b", Title: "B", UpdatedAt: t0.Add(time.Hour), Interface: "matrix", Room: "general"},
		{ID: "c", Title: "general", UpdatedAt: t0.Add(2 * time.Hour)},                                // the name in its title only
		{ID: "d", Title: "D", UpdatedAt: t0.Add(3 * time.Hour), Interface: "cli", Room: "general-2"}, // a room whose name holds it
		{ID: "e", Title: "E", UpdatedAt: t0.Add(4 * time.Hour), Room: "general"},                     // a room without an interface
	}
	mustUpdate(t, s, func(tx *Tx) error {
		for _, x := range in {
			if err := tx.PutSession(x); err != nil {
				return err
			}
		}
		return nil
	})
	tests := []struct {
		room string
		want []string
	}{
		{"general", []string{"e", "b", "a"}},
		{"general-2", []string{"d"}},
		{"gen", nil},
		{"nowhere", nil},
		{"", nil},
	}
	for _, tt := range tests {
		mustView(t, s, func(tx *Tx) error {
			got, err := tx.RoomSessions(tt.room)
			if err != nil {
				t.Fatalf("RoomSessions(%q): %v", tt.room, err)
			}
			var ids []string
			for _, x := range got {
				ids = append(ids, x.ID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("RoomSessions(%q) = %v, want %v", tt.room, ids, tt.want)
			}
			return nil
		})
	}

	// A record that cannot be decoded and may be of the room is an
	// error; one that cannot be of it is passed by.
	if err := s.updateRaw(func(tx *bolt.Tx) error {
		return tx.Bucket(bktSessions).Put([]byte("z"), []byte("\x09\x00\x00\x00\x07general"))
	}); err != nil {
		t.Fatal(err)
	}
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.RoomSessions("general"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("RoomSessions over a damaged record of the room: %v, want ErrCorrupt", err)
		}
		if got, err := tx.RoomSessions("general-2"); err != nil || len(got) != 1 {
			t.Errorf("RoomSessions(general-2) beside a damaged record: %v, %v", got, err)
		}
		return nil
	})
}
