package boltstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"weft/model"
)

// Records made ahead of the transaction (EncodeMessages, Pick) are stored
// as AppendMessages stores them: the same messages, heads and time index,
// and the same checks of seqs.
func TestAppendEncodedStoresAsAppendMessages(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "plain")
	putSession(t, s, "enc")
	var all []model.Message
	for i := range 2*headsPerChunk + 100 {
		m := model.Message{
			Role: model.RoleUser, Content: fmt.Sprintf("message %d", i), Tokens: i % 50,
			CreatedAt: t0.Add(time.Duration(i) * time.Second), Digest: model.ContentDigest(model.RoleUser, fmt.Sprint(i)),
		}
		if i%3 == 1 {
			m.Role, m.Name, m.Meta = model.RoleAssistant, "bot", map[string]string{"model": "m"}
		}
		if i == 700 {
			m.CreatedAt = t0 // out of time order: the index is written
		}
		all = append(all, m)
	}
	enc, err := EncodeMessages(all)
	if err != nil {
		t.Fatal(err)
	}
	// Every other message, as an import stores those of a batch that are new.
	var idx []int
	var picked []model.Message
	for i := range all {
		if i%2 == 0 {
			m := all[i]
			m.Seq = uint64(len(picked) + 1)
			m.ID = model.MessageID(m.Seq)
			idx, picked = append(idx, i), append(picked, m)
		}
	}
	half := len(picked) / 2
	sub := enc.Pick(idx)
	if sub.Len() != len(picked) {
		t.Fatalf("picked %d records for %d messages", sub.Len(), len(picked))
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("plain", picked) })
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendEncoded("enc", picked[:half], sub.Pick(seqs(half, 0))) })
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.AppendEncoded("enc", picked[half:], sub.Pick(seqs(len(picked)-half, half)))
	})
	if err := s.update(func(tx *Tx) error { return tx.AppendEncoded("enc", picked[:1], sub.Pick([]int{0})) }); err == nil {
		t.Error("a seq that does not continue the stored ones was stored")
	}
	mustView(t, s, func(tx *Tx) error {
		read := func(id string) (ms []model.Message, heads []model.Head, times []uint64) {
			if err := tx.Messages(id, 1, 1<<20, func(m model.Message) error { ms = append(ms, m); return nil }); err != nil {
				t.Fatal(err)
			}
			var err error
			if heads, err = tx.Heads(id); err != nil {
				t.Fatal(err)
			}
			if err := tx.TimeAscend(id, t0, func(seq uint64, _ int64) bool { times = append(times, seq); return true }); err != nil {
				t.Fatal(err)
			}
			return
		}
		pm, ph, pt := read("plain")
		em, eh, et := read("enc")
		if len(pm) != len(picked) || !reflect.DeepEqual(pm, em) || !reflect.DeepEqual(ph, eh) || !reflect.DeepEqual(pt, et) {
			t.Errorf("stored otherwise: %d and %d messages, %d and %d heads, %d and %d in time order", len(pm), len(em), len(ph), len(eh), len(pt), len(et))
		}
		return nil
	})
	if _, err := EncodeMessages([]model.Message{{Role: "robot"}}); err == nil {
		t.Error("a message with no valid role was encoded")
	}
}

// seqs is the n places from start on.
func seqs(n, start int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}
