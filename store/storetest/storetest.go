// Package storetest is the conformance suite of store.Store: the same
// tests, the same errors, for every backend. A backend's tests call Run
// with a way to open a fresh, empty store of it.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/store"
)

// Open opens a fresh, empty store for one test; the test closes it.
type Open func(t *testing.T) store.Store

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// Run runs the suite against the stores open makes.
func Run(t *testing.T, open Open) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"Sessions", sessions},
		{"SessionNotFound", sessionNotFound},
		{"Messages", messages},
		{"AppendMustContinue", appendMustContinue},
		{"TimeOrder", timeOrder},
		{"Operations", operations},
		{"ImportKeysAndSources", importKeysAndSources},
		{"PrefsAndSettings", prefsAndSettings},
		{"Rooms", rooms},
		{"DeleteSession", deleteSession},
		{"UpdateIsAtomic", updateIsAtomic},
		{"Encoded", encoded},
		{"SessionsBefore", sessionsBefore},
		{"ReadParts", readParts},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			c.fn(t, s)
		})
	}
}

func update(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.View(fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func session(id string, at time.Time) model.Session {
	return model.Session{ID: id, Title: "title of " + id, CreatedAt: at, UpdatedAt: at}
}

// msg is stored message seq of a session.
func msg(seq uint64, role model.Role, content string, at time.Time) model.Message {
	return model.Message{
		ID: model.MessageID(seq), Seq: seq, Role: role, Content: content, CreatedAt: at,
		Tokens: len(content)/4 + 1, Digest: model.ContentDigest(role, content),
	}
}

// thread makes a session id with n messages, a minute apart.
func thread(t *testing.T, s store.Store, id string, n int) []model.Message {
	t.Helper()
	msgs := make([]model.Message, n)
	for i := range msgs {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		msgs[i] = msg(uint64(i+1), role, fmt.Sprintf("message %d of %s", i+1, id), t0.Add(time.Duration(i)*time.Minute))
	}
	update(t, s, func(tx store.Tx) error {
		info := session(id, t0)
		info.MessageCount = n
		if err := tx.PutSession(info); err != nil {
			return err
		}
		return tx.AppendMessages(id, msgs)
	})
	return msgs
}

func sessions(t *testing.T, s store.Store) {
	for i, id := range []string{"a", "b", "c"} {
		update(t, s, func(tx store.Tx) error { return tx.PutSession(session(id, t0.Add(time.Duration(i)*time.Hour))) })
	}
	// A record replaced keeps what it is given.
	want := session("b", t0)
	want.Title, want.UpdatedAt, want.Version, want.ActiveTags = "renamed", t0.Add(5*time.Hour), 7, []string{"db"}
	want.Memory = &model.MemoryPolicy{MaxActiveTurns: 4}
	want.ForkOf = &model.Fork{SessionID: "a", At: "m2", Index: 1}
	want.Room, want.Interface, want.Source = "!r:x", "matrix", "proxy"
	update(t, s, func(tx store.Tx) error { return tx.PutSession(want) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Session("b")
		if err != nil {
			return err
		}
		if got.Title != want.Title || !got.UpdatedAt.Equal(want.UpdatedAt) || got.Version != 7 || !slices.Equal(got.ActiveTags, want.ActiveTags) ||
			got.Memory == nil || got.Memory.MaxActiveTurns != 4 || got.ForkOf == nil || *got.ForkOf != *want.ForkOf || got.Room != "!r:x" || got.Interface != "matrix" || got.Source != "proxy" {
			t.Errorf("the record read back %+v, want %+v", got, want)
		}
		list, err := tx.Sessions()
		if err != nil {
			return err
		}
		var ids []string
		for _, x := range list {
			ids = append(ids, x.ID)
		}
		if !slices.Equal(ids, []string{"b", "c", "a"}) {
			t.Errorf("Sessions: %v, want the most recently updated first", ids)
		}
		all, bad := tx.AllSessions()
		if len(all) != 3 || len(bad) != 0 {
			t.Errorf("AllSessions: %d and %v", len(all), bad)
		}
		return nil
	})
	list, err := s.Sessions()
	if err != nil || len(list) != 3 {
		t.Errorf("Store.Sessions: %d, %v", len(list), err)
	}
}

func sessionNotFound(t *testing.T, s store.Store) {
	view(t, s, func(tx store.Tx) error {
		if _, err := tx.Session("nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Session of none: %v, want ErrNotFound", err)
		}
		if _, err := tx.Message("nope", 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Message of no session: %v, want ErrNotFound", err)
		}
		if _, err := tx.OpSession("nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("OpSession of none: %v, want ErrNotFound", err)
		}
		return nil
	})
	thread(t, s, "a", 2)
	view(t, s, func(tx store.Tx) error {
		if _, err := tx.Message("a", 3); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Message past the end: %v, want ErrNotFound", err)
		}
		return nil
	})
}

func messages(t *testing.T, s store.Store) {
	want := thread(t, s, "a", 40)
	thread(t, s, "other", 3)
	// More, with parts, meta and a name.
	extra := []model.Message{msg(41, model.RoleTool, "the output", t0.Add(time.Hour))}
	extra[0].Name, extra[0].Meta = "bash", map[string]string{"k": "v"}
	extra[0].Parts = model.EncodeParts([]model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Text: "the output"}})
	update(t, s, func(tx store.Tx) error { return tx.AppendMessages("a", extra) })
	want = append(want[:40:40], extra...)
	view(t, s, func(tx store.Tx) error {
		if n, err := tx.LastSeq("a"); err != nil || n != 41 {
			t.Errorf("LastSeq: %d, %v", n, err)
		}
		m, err := tx.Message("a", 41)
		if err != nil {
			return err
		}
		if m.Content != "the output" || m.Name != "bash" || m.Meta["k"] != "v" || string(m.Parts) != string(extra[0].Parts) || !m.CreatedAt.Equal(extra[0].CreatedAt) || m.Digest != extra[0].Digest || m.Tokens != extra[0].Tokens || m.ID != "m41" {
			t.Errorf("message 41 read back %+v, want %+v", m, extra[0])
		}
		var got []uint64
		if err := tx.Messages("a", 10, 12, func(m model.Message) error {
			got = append(got, m.Seq)
			if m.Content != want[m.Seq-1].Content {
				t.Errorf("message %d: %q", m.Seq, m.Content)
			}
			return nil
		}); err != nil {
			return err
		}
		if !slices.Equal(got, []uint64{10, 11, 12}) {
			t.Errorf("Messages 10..12: %v", got)
		}
		seen := 0
		if err := tx.ScanContent("a", func(seq uint64, content []byte) bool {
			if string(content) != want[seq-1].Content {
				t.Errorf("ScanContent %d: %q", seq, content)
			}
			seen++
			return seq < 20
		}); err != nil {
			return err
		}
		if seen != 20 {
			t.Errorf("ScanContent stopped after %d, want 20", seen)
		}
		heads, err := tx.Heads("a")
		if err != nil {
			return err
		}
		if len(heads) != 41 || heads[40] != want[40].Head() || heads[0] != want[0].Head() {
			t.Errorf("Heads: %d, last %+v", len(heads), heads[len(heads)-1])
		}
		return nil
	})
}

func appendMustContinue(t *testing.T, s store.Store) {
	thread(t, s, "a", 3)
	for _, bad := range [][]model.Message{
		{msg(5, model.RoleUser, "a gap", t0)},
		{msg(3, model.RoleUser, "again", t0)},
		{msg(4, model.RoleUser, "fine", t0), msg(6, model.RoleUser, "a gap after it", t0)},
		{msg(4, model.Role("robot"), "bad role", t0)},
	} {
		if err := s.Update(func(tx store.Tx) error { return tx.AppendMessages("a", bad) }); err == nil {
			t.Errorf("appending seqs %d..%d after 3 was taken", bad[0].Seq, bad[len(bad)-1].Seq)
		}
	}
	view(t, s, func(tx store.Tx) error {
		if n, err := tx.LastSeq("a"); err != nil || n != 3 {
			t.Errorf("after refused appends: last seq %d, %v; want 3", n, err)
		}
		return nil
	})
}

func timeOrder(t *testing.T, s store.Store) {
	msgs := []model.Message{
		msg(1, model.RoleUser, "late", t0.Add(2*time.Hour)),
		msg(2, model.RoleUser, "early", t0),
		msg(3, model.RoleUser, "middle", t0.Add(time.Hour)),
	}
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutSession(session("a", t0)); err != nil {
			return err
		}
		return tx.AppendMessages("a", msgs)
	})
	view(t, s, func(tx store.Tx) error {
		var seqs []uint64
		if err := tx.TimeAscend("a", t0.Add(30*time.Minute), func(seq uint64, at int64) bool {
			seqs = append(seqs, seq)
			return true
		}); err != nil {
			return err
		}
		if !slices.Equal(seqs, []uint64{3, 1}) {
			t.Errorf("TimeAscend from 10:30: %v, want 3 1", seqs)
		}
		first, latest, ok, err := tx.TimeSpan("a")
		if err != nil || !ok || first != t0.UnixNano() || latest != t0.Add(2*time.Hour).UnixNano() {
			t.Errorf("TimeSpan: %d %d %v %v", first, latest, ok, err)
		}
		if _, _, ok, err := tx.TimeSpan("none"); ok || !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TimeSpan of no session: %v %v", ok, err)
		}
		return nil
	})
}

func operations(t *testing.T, s store.Store) {
	thread(t, s, "a", 4)
	ops := []model.Op{
		{ID: "op1", Type: model.OpDigest, Targets: []model.ItemID{"m1", "m2"}, Payload: model.OpPayload{Summary: "s"}, Active: true, CreatedAt: t0, Author: "operator", Version: 2},
		{ID: "op2", Type: model.OpTag, Targets: []model.ItemID{"m3"}, Payload: model.OpPayload{Tags: []string{"db"}}, Active: true, CreatedAt: t0.Add(time.Second), Author: "memory", Rule: model.RuleTurns, Version: 3},
	}
	for _, op := range ops {
		update(t, s, func(tx store.Tx) error { return tx.PutOp("a", op) })
	}
	// An operation changed later (reverted) is stored in its place.
	at := t0.Add(time.Minute)
	ops[0].RevertedAt = &at
	update(t, s, func(tx store.Tx) error { return tx.PutOp("a", ops[0]) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Ops("a")
		if err != nil {
			return err
		}
		if len(got) != 2 || got[0].ID != "op1" || got[1].ID != "op2" || got[0].RevertedAt == nil || got[1].Rule != model.RuleTurns || got[0].Payload.Summary != "s" {
			t.Errorf("Ops: %+v, want both in creation order, the first reverted", got)
		}
		if sid, err := tx.OpSession("op2"); err != nil || sid != "a" {
			t.Errorf("OpSession: %q %v", sid, err)
		}
		return nil
	})
}

func importKeysAndSources(t *testing.T, s store.Store) {
	thread(t, s, "a", 3)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutImportKey("a", "line-7", 2); err != nil {
			return err
		}
		if err := tx.PutImportKey("a", "line-9", 3); err != nil {
			return err
		}
		return tx.PutSourceSession("claude-code:abc", "a")
	})
	view(t, s, func(tx store.Tx) error {
		if seq, ok, err := tx.ImportKey("a", "line-7"); err != nil || !ok || seq != 2 {
			t.Errorf("ImportKey: %d %v %v", seq, ok, err)
		}
		if _, ok, err := tx.ImportKey("a", "line-8"); err != nil || ok {
			t.Errorf("an import key never put: %v %v", ok, err)
		}
		keys := map[string]uint64{}
		if err := tx.EachImportKey("a", func(k string, seq uint64) error { keys[k] = seq; return nil }); err != nil {
			return err
		}
		if len(keys) != 2 || keys["line-9"] != 3 {
			t.Errorf("EachImportKey: %v", keys)
		}
		if sid, ok := tx.SourceSession("claude-code:abc"); !ok || sid != "a" {
			t.Errorf("SourceSession: %q %v", sid, ok)
		}
		if _, ok := tx.SourceSession("claude-code:none"); ok {
			t.Error("a source never put has a session")
		}
		if src, err := tx.SessionSources("a"); err != nil || !slices.Equal(src, []string{"claude-code:abc"}) {
			t.Errorf("SessionSources: %v %v", src, err)
		}
		return nil
	})
}

func prefsAndSettings(t *testing.T, s store.Store) {
	thread(t, s, "a", 1)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutPrefs("a", []byte(`{"slice":[1,2]}`)); err != nil {
			return err
		}
		return tx.PutSetting("memory/file", []byte(`{"budget_tokens":1}`))
	})
	view(t, s, func(tx store.Tx) error {
		if p, err := tx.Prefs("a"); err != nil || string(p) != `{"slice":[1,2]}` {
			t.Errorf("Prefs: %s %v", p, err)
		}
		if v := tx.Setting("memory/file"); string(v) != `{"budget_tokens":1}` {
			t.Errorf("Setting: %s", v)
		}
		if v := tx.Setting("none"); v != nil {
			t.Errorf("a setting never put: %q", v)
		}
		n := 0
		if err := tx.Settings(func(name string, value []byte) error { n++; return nil }); err != nil || n != 1 {
			t.Errorf("Settings: %d %v", n, err)
		}
		return nil
	})
	// Prefs are consumed: put empty, they are gone.
	update(t, s, func(tx store.Tx) error { return tx.PutPrefs("a", nil) })
	view(t, s, func(tx store.Tx) error {
		if p, err := tx.Prefs("a"); err != nil || len(p) != 0 {
			t.Errorf("Prefs after clearing: %q %v", p, err)
		}
		return nil
	})
}

func rooms(t *testing.T, s store.Store) {
	for i, x := range []struct{ id, room, iface string }{{"a", "!r:x", "matrix"}, {"b", "!r:x", "cli"}, {"c", "!other:x", "matrix"}, {"d", "", ""}} {
		info := session(x.id, t0.Add(time.Duration(i)*time.Hour))
		info.Room, info.Interface = x.room, x.iface
		update(t, s, func(tx store.Tx) error { return tx.PutSession(info) })
	}
	view(t, s, func(tx store.Tx) error {
		got, err := tx.RoomSessions("!r:x")
		if err != nil {
			return err
		}
		var ids []string
		for _, x := range got {
			ids = append(ids, x.ID)
		}
		if !slices.Equal(ids, []string{"b", "a"}) {
			t.Errorf("RoomSessions: %v, want b a (latest first)", ids)
		}
		if got, err := tx.RoomSessions(""); err != nil || len(got) != 0 {
			t.Errorf("RoomSessions of no room: %v %v", got, err)
		}
		return nil
	})
}

func deleteSession(t *testing.T, s store.Store) {
	thread(t, s, "a", 3)
	thread(t, s, "b", 2)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutOp("a", model.Op{ID: "op1", Type: model.OpSnip, Targets: []model.ItemID{"m1"}, Active: true, CreatedAt: t0, Author: "operator"}); err != nil {
			return err
		}
		if err := tx.PutImportKey("a", "k", 1); err != nil {
			return err
		}
		return tx.PutSourceSession("src", "a")
	})
	update(t, s, func(tx store.Tx) error { return tx.DeleteSession("a") })
	view(t, s, func(tx store.Tx) error {
		if _, err := tx.Session("a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted session: %v", err)
		}
		if _, err := tx.OpSession("op1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted session's operation: %v", err)
		}
		if _, ok := tx.SourceSession("src"); ok {
			t.Error("a deleted session's source still leads to it")
		}
		if m, err := tx.Message("b", 2); err != nil || m.Content != "message 2 of b" {
			t.Errorf("the other session: %+v %v", m, err)
		}
		return nil
	})
	if err := s.Update(func(tx store.Tx) error { return tx.DeleteSession("a") }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting it again: %v, want ErrNotFound", err)
	}
}

func updateIsAtomic(t *testing.T, s store.Store) {
	thread(t, s, "a", 2)
	boom := errors.New("boom")
	err := s.Update(func(tx store.Tx) error {
		if err := tx.AppendMessages("a", []model.Message{msg(3, model.RoleUser, "half", t0)}); err != nil {
			return err
		}
		if err := tx.PutSession(session("b", t0)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want fn's error", err)
	}
	view(t, s, func(tx store.Tx) error {
		if n, _ := tx.LastSeq("a"); n != 2 {
			t.Errorf("a failed Update left message %d", n)
		}
		if _, err := tx.Session("b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a failed Update left session b: %v", err)
		}
		return nil
	})
}

func encoded(t *testing.T, s store.Store) {
	thread(t, s, "a", 1)
	batch := []model.Message{msg(2, model.RoleUser, "two", t0), msg(3, model.RoleAssistant, "three", t0), msg(4, model.RoleUser, "four", t0)}
	half1, err := s.Encode(batch[:1])
	if err != nil {
		t.Fatal(err)
	}
	half2, err := s.Encode(batch[1:])
	if err != nil {
		t.Fatal(err)
	}
	enc := half1.Join(half2)
	if enc.Len() != 3 {
		t.Fatalf("joined: %d records", enc.Len())
	}
	// Only the first and last: a batch stores what it picks.
	picked := enc.Pick([]int{0, 2})
	kept := []model.Message{batch[0], batch[2]}
	kept[1].Seq, kept[1].ID = 3, "m3"
	update(t, s, func(tx store.Tx) error { return tx.AppendEncoded("a", kept, picked) })
	view(t, s, func(tx store.Tx) error {
		m, err := tx.Message("a", 3)
		if err == nil && m.Content != "four" {
			t.Errorf("message 3: %q, want four", m.Content)
		}
		return err
	})
}

func sessionsBefore(t *testing.T, s store.Store) {
	for i := range 5 {
		update(t, s, func(tx store.Tx) error {
			return tx.PutSession(session(fmt.Sprintf("s%d", i), t0.Add(time.Duration(i)*time.Minute)))
		})
	}
	view(t, s, func(tx store.Tx) error {
		var all []string
		before, more := "", true
		for more {
			var page []store.SessionEntry
			page, more = tx.SessionsBefore(before, 2)
			for _, e := range page {
				if e.Err != nil {
					t.Errorf("entry %s: %v", e.ID, e.Err)
				}
				all = append(all, e.ID)
				before = e.ID
			}
			if len(page) == 0 {
				break
			}
		}
		if len(all) != 5 || len(slices.Compact(slices.Sorted(slices.Values(all)))) != 5 {
			t.Errorf("pages of SessionsBefore: %v, want the 5 sessions once each", all)
		}
		return nil
	})
}

// readParts: parts as read (Message.ReadParts) are stored as their JSON
// would be (model.AppendParts), whether they repeat the content (a tool
// result, its text in the part and in its block, as a client wrote it)
// or not; the head says the message has parts. Through AppendEncoded
// too.
func readParts(t *testing.T, s store.Store) {
	thread(t, s, "a", 1)
	out := strings.Repeat("ok\tthe output of a tool, <b> & \"quoted\"\n", 40)
	result := msg(2, model.RoleTool, out, t0)
	result.ReadParts = []model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Text: out,
		Raw: json.RawMessage(`{"type": "tool_result", "tool_use_id": "c1", "content": ` + string(model.AppendQuoted(nil, out)) + `, "is_error": false}`)}}
	call := msg(3, model.RoleAssistant, "", t0)
	call.ReadParts = []model.Part{{Type: model.PartToolCall, ToolCallID: "c2", ToolName: "bash", Input: json.RawMessage(`{"cmd":"ls"}`)}}
	batch := []model.Message{result, call}
	update(t, s, func(tx store.Tx) error { return tx.AppendMessages("a", batch) })
	last := msg(4, model.RoleTool, out, t0)
	last.ReadParts = result.ReadParts
	enc, err := s.Encode([]model.Message{last})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, func(tx store.Tx) error { return tx.AppendEncoded("a", []model.Message{last}, enc) })
	view(t, s, func(tx store.Tx) error {
		for _, w := range append(batch, last) {
			m, err := tx.Message("a", w.Seq)
			if err != nil {
				return err
			}
			want, _ := model.AppendParts(nil, w.ReadParts, nil)
			if string(m.Parts) != string(want) || m.Content != w.Content {
				t.Errorf("message %d read back with parts %s, want %s", w.Seq, m.Parts, want)
			}
		}
		heads, err := tx.Heads("a")
		for i, h := range heads {
			if i > 0 && h.Flags&model.HeadHasParts == 0 {
				t.Errorf("head %d says the message has no parts", i+1)
			}
		}
		return err
	})
}
