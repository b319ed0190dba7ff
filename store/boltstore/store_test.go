package boltstore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)

func openT(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tempDB(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weft.db")
	return openT(t, path), path
}

func mustUpdate(t testing.TB, s *Store, fn func(*Tx) error) {
	t.Helper()
	if err := s.update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func mustView(t testing.TB, s *Store, fn func(*Tx) error) {
	t.Helper()
	if err := s.view(fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func putSession(t testing.TB, s *Store, id string) {
	t.Helper()
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.PutSession(model.Session{ID: id, Title: "title of " + id, CreatedAt: t0, UpdatedAt: t0})
	})
}

func msg(seq uint64, role model.Role, content string, at time.Time) model.Message {
	return model.Message{
		ID:        model.MessageID(seq),
		Seq:       seq,
		Role:      role,
		Content:   content,
		CreatedAt: at,
		Tokens:    len(content) / 4,
		Digest:    model.ContentDigest(role, content),
	}
}

// sameMessage compares two messages, CreatedAt by instant plus UTC-ness.
func sameMessage(t *testing.T, got, want model.Message) {
	t.Helper()
	if !got.CreatedAt.Equal(want.CreatedAt) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("seq %d: CreatedAt = %v (%v), want %v in UTC", want.Seq, got.CreatedAt, got.CreatedAt.Location(), want.CreatedAt)
	}
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seq %d:\n got %#v\nwant %#v", want.Seq, got, want)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("UTC+5:30", 5*3600+1800)
	cases := []struct {
		name string
		in   model.Message
		want func(*model.Message) // adjusts the expected result; nil: same as in
	}{
		{name: "plain", in: msg(0, model.RoleUser, "hello", t0)},
		{name: "unicode", in: func() model.Message {
			m := msg(0, model.RoleAssistant, "héllo wörld ✓ 日本語 🎉\n\ttabs", t0)
			m.Name = "名前-🤖"
			return m
		}()},
		// What reorders or hides text is shown on a terminal, never
		// changed in the file.
		{name: "reordering and zero-width", in: func() model.Message {
			m := msg(0, model.RoleUser, "invoice \u202efdp.exe \u2066a\u2069 \u200e\u200f\u061c \u200b\u200c\u200d\u2060\ufeff", t0)
			m.Name = "\u202ename"
			return m
		}()},
		{name: "parts", in: func() model.Message {
			m := msg(0, model.RoleAssistant, "", t0)
			m.Parts = json.RawMessage(`[{"type":"tool_use","id":"x","input":{"a": 1,  "b":[true,null]}}]`)
			return m
		}()},
		{name: "meta", in: func() model.Message {
			m := msg(0, model.RoleTool, "result", t0)
			m.Name = "grep"
			m.Meta = map[string]string{"model": "gpt-x", "": "empty key", "ключ": "значение", "empty": ""}
			return m
		}()},
		{name: "empty meta and parts come back nil", in: func() model.Message {
			m := msg(0, model.RoleSystem, "sys", t0)
			m.Meta = map[string]string{}
			m.Parts = json.RawMessage{}
			return m
		}(), want: func(m *model.Message) { m.Meta, m.Parts = nil, nil }},
		{name: "non-UTC zone comes back UTC", in: msg(0, model.RoleUser, "zone", time.Date(2023, 7, 4, 9, 8, 7, 6, loc))},
		{name: "pre-1970", in: msg(0, model.RoleUser, "old", time.Date(1901, 12, 14, 20, 45, 52, 999999999, time.UTC))},
		{name: "nanoseconds", in: msg(0, model.RoleUser, "ns", time.Unix(0, 1).UTC())},
		{name: "monotonic reading dropped", in: msg(0, model.RoleUser, "now", time.Now())},
		{name: "negative and huge tokens", in: func() model.Message {
			m := msg(0, model.RoleUser, "tokens", t0)
			m.Tokens = -7
			return m
		}()},
		{name: "tokens beyond uint32", in: func() model.Message {
			m := msg(0, model.RoleUser, "tokens", t0)
			m.Tokens = math.MaxInt // beyond uint32 where int has 64 bits
			return m
		}()},
		{name: "digest not hex", in: func() model.Message {
			m := msg(0, model.RoleUser, "d", t0)
			m.Digest = "not-a-sha"
			return m
		}()},
		{name: "digest uppercase hex", in: func() model.Message {
			m := msg(0, model.RoleUser, "d", t0)
			m.Digest = strings.ToUpper(m.Digest)
			return m
		}()},
		{name: "digest empty", in: func() model.Message {
			m := msg(0, model.RoleUser, "d", t0)
			m.Digest = ""
			return m
		}()},
		{name: "binary content", in: msg(0, model.RoleUser, "nul\x00byte and bad utf8 \xff\xfe", t0)},
		{name: "empty content", in: msg(0, model.RoleUser, "", t0)},
		{name: "large content", in: msg(0, model.RoleUser, strings.Repeat("0123456789abcdef", 1<<13), t0)},
		{name: "id left empty", in: func() model.Message {
			m := msg(0, model.RoleUser, "no id", t0)
			m.ID = ""
			return m
		}(), want: func(m *model.Message) { m.ID = model.MessageID(m.Seq) }},
	}
	s, path := tempDB(t)
	putSession(t, s, "s")
	var in, want []model.Message
	for i, c := range cases {
		m := c.in
		m.Seq = uint64(i + 1)
		if m.ID != "" {
			m.ID = model.MessageID(m.Seq)
		}
		in = append(in, m)
		w := m
		if c.want != nil {
			c.want(&w)
		}
		want = append(want, w)
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", in) })

	check := func(s *Store) {
		mustView(t, s, func(tx *Tx) error {
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					got, err := tx.Message("s", want[i].Seq)
					if err != nil {
						t.Fatal(err)
					}
					sameMessage(t, got, want[i])
				})
			}
			var all []model.Message
			if err := tx.Messages("s", 1, uint64(len(cases)), func(m model.Message) error { all = append(all, m); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(all) != len(want) {
				t.Fatalf("Messages gave %d, want %d", len(all), len(want))
			}
			for i := range all {
				sameMessage(t, all[i], want[i])
			}
			heads, err := tx.Heads("s")
			if err != nil {
				t.Fatal(err)
			}
			for i := range in {
				if heads[i] != in[i].Head() {
					t.Errorf("head %d = %+v, want %+v", i+1, heads[i], in[i].Head())
				}
			}
			return nil
		})
	}
	check(s)
	s.Close()
	check(openT(t, path))
}

func TestMessagesRange(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	var ms []model.Message
	for i := range 20 {
		ms = append(ms, msg(uint64(i+1), model.RoleUser, fmt.Sprint("m", i+1), t0))
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
	cases := []struct {
		from, to uint64
		want     []uint64
	}{
		{0, 3, []uint64{1, 2, 3}},
		{5, 7, []uint64{5, 6, 7}},
		{19, 100, []uint64{19, 20}},
		{7, 7, []uint64{7}},
		{8, 7, nil},
		{21, 30, nil},
	}
	mustView(t, s, func(tx *Tx) error {
		for _, c := range cases {
			var got []uint64
			err := tx.Messages("s", c.from, c.to, func(m model.Message) error {
				if m.Content != fmt.Sprint("m", m.Seq) {
					t.Errorf("seq %d has content %q", m.Seq, m.Content)
				}
				got = append(got, m.Seq)
				return nil
			})
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("Messages(%d, %d) = %v, %v; want %v", c.from, c.to, got, err, c.want)
			}
		}
		stop := errors.New("stop")
		n := 0
		if err := tx.Messages("s", 1, 20, func(model.Message) error { n++; return stop }); err != stop || n != 1 {
			t.Errorf("Messages with failing fn: err %v after %d calls", err, n)
		}
		_, err := tx.Message("s", 21)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "message 21") || !strings.Contains(err.Error(), `"s"`) {
			t.Errorf("Message(21) error = %v", err)
		}
		return nil
	})
}

func TestSeqContinuity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		stored  int
		seqs    []uint64
		wantErr string // empty: no error
	}{
		{"first is 1", 0, []uint64{1, 2, 3}, ""},
		{"first must be 1", 0, []uint64{2}, "expected seq 1"},
		{"zero", 0, []uint64{0}, "expected seq 1"},
		{"continue", 3, []uint64{4, 5}, ""},
		{"repeat", 3, []uint64{3}, "expected seq 4"},
		{"gap", 3, []uint64{5}, "expected seq 4"},
		{"gap inside batch", 3, []uint64{4, 6}, "expected seq 5"},
		{"repeat inside batch", 3, []uint64{4, 4}, "expected seq 5"},
		{"empty batch", 3, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := tempDB(t)
			putSession(t, s, "s")
			var pre []model.Message
			for i := range c.stored {
				pre = append(pre, msg(uint64(i+1), model.RoleUser, "x", t0))
			}
			mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", pre) })
			var ms []model.Message
			for _, q := range c.seqs {
				ms = append(ms, msg(q, model.RoleUser, "y", t0))
			}
			err := s.update(func(tx *Tx) error { return tx.AppendMessages("s", ms) })
			wantLast := uint64(c.stored)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				wantLast += uint64(len(ms))
			} else if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
			}
			mustView(t, s, func(tx *Tx) error {
				last, err := tx.LastSeq("s")
				if err != nil || last != wantLast {
					t.Errorf("LastSeq = %d, %v; want %d", last, err, wantLast)
				}
				heads, err := tx.Heads("s")
				if err != nil || uint64(len(heads)) != wantLast {
					t.Errorf("Heads has %d, %v; want %d", len(heads), err, wantLast)
				}
				return nil
			})
		})
	}
}

func TestAppendRejects(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	bad := func(f func(*model.Message)) []model.Message {
		m := msg(1, model.RoleUser, "x", t0)
		f(&m)
		return []model.Message{m}
	}
	cases := []struct {
		name    string
		session string
		msgs    []model.Message
		want    string
	}{
		{"missing session", "nope", bad(func(*model.Message) {}), `session "nope" not found`},
		{"wrong id", "s", bad(func(m *model.Message) { m.ID = "m7" }), `ID "m7"`},
		{"bad role", "s", bad(func(m *model.Message) { m.Role = "developer" }), `role "developer"`},
		{"zero time", "s", bad(func(m *model.Message) { m.CreatedAt = time.Time{} }), "storable range"},
		{"time too late", "s", bad(func(m *model.Message) { m.CreatedAt = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }), "storable range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.update(func(tx *Tx) error { return tx.AppendMessages(c.session, c.msgs) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
	err := s.update(func(tx *Tx) error { return tx.AppendMessages("nope", nil) })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("append to missing session: %v", err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	in := []model.Session{
		{ID: "b", Title: "B", UpdatedAt: t0.Add(time.Hour)},
		{ID: "a", Title: "A", UpdatedAt: t0.Add(time.Hour)},
		{ID: "c", Title: "C", UpdatedAt: t0.Add(2 * time.Hour), ActiveTags: []string{"x"}, Source: "claude", Interface: "tui", Room: "r",
			Changes: []model.Change{{Version: 1, At: t0, Author: "me", What: "made"}}, Version: 1, MessageCount: 3, Tokens: 9, OpCount: 2},
		{ID: "d", Title: "D", UpdatedAt: t0},
	}
	mustUpdate(t, s, func(tx *Tx) error {
		for _, x := range in {
			if err := tx.PutSession(x); err != nil {
				return err
			}
		}
		return nil
	})
	mustView(t, s, func(tx *Tx) error {
		all, err := tx.Sessions()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range all {
			ids = append(ids, x.ID)
		}
		if want := []string{"c", "a", "b", "d"}; !slices.Equal(ids, want) {
			t.Errorf("Sessions order = %v, want %v", ids, want)
		}
		got, err := tx.Session("c")
		if err != nil || !reflect.DeepEqual(got, in[2]) {
			t.Errorf("Session(c) = %+v, %v; want %+v", got, err, in[2])
		}
		_, err = tx.Session("x")
		if !errors.Is(err, ErrNotFound) || err.Error() != `session "x" not found` {
			t.Errorf("Session(x) error = %v", err)
		}
		return nil
	})
	// Replace keeps one record and the session's messages.
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.AppendMessages("d", []model.Message{msg(1, model.RoleUser, "kept", t0)}); err != nil {
			return err
		}
		return tx.PutSession(model.Session{ID: "d", Title: "D2", UpdatedAt: t0.Add(3 * time.Hour)})
	})
	mustView(t, s, func(tx *Tx) error {
		all, _ := tx.Sessions()
		if len(all) != 4 || all[0].ID != "d" || all[0].Title != "D2" {
			t.Errorf("after replace: %+v", all)
		}
		if m, err := tx.Message("d", 1); err != nil || m.Content != "kept" {
			t.Errorf("message after replace: %+v, %v", m, err)
		}
		return nil
	})
	if err := s.update(func(tx *Tx) error { return tx.PutSession(model.Session{}) }); err == nil {
		t.Error("PutSession with empty ID succeeded")
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	sess := model.Session{ID: "s1", Title: "one: invoice \u202efdp.exe\u200b", CreatedAt: t0, UpdatedAt: t0, MessageCount: 2}
	ms := []model.Message{msg(1, model.RoleUser, "q", t0), msg(2, model.RoleAssistant, "a", t0.Add(time.Second))}
	op := model.Op{ID: "op1", Type: model.OpTag, Targets: []model.ItemID{"m1"}, Payload: model.OpPayload{Tags: []string{"t"}}, Active: true, CreatedAt: t0, Author: "me", Version: 3}
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutSession(sess); err != nil {
			return err
		}
		if err := tx.AppendMessages("s1", ms); err != nil {
			return err
		}
		if err := tx.PutOp("s1", op); err != nil {
			return err
		}
		if err := tx.PutImportKey("s1", "k1", 2); err != nil {
			return err
		}
		return tx.PutPrefs("s1", []byte(`{"a":1}`))
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, path)
	if s.Path() != path {
		t.Errorf("Path = %q", s.Path())
	}
	mustUpdate(t, s, func(tx *Tx) error {
		got, err := tx.Session("s1")
		if err != nil || !reflect.DeepEqual(got, sess) {
			t.Errorf("session = %+v, %v", got, err)
		}
		for _, m := range ms {
			got, err := tx.Message("s1", m.Seq)
			if err != nil {
				t.Fatal(err)
			}
			sameMessage(t, got, m)
		}
		ops, err := tx.Ops("s1")
		if err != nil || len(ops) != 1 || !reflect.DeepEqual(ops[0], op) {
			t.Errorf("ops = %+v, %v", ops, err)
		}
		if sid, err := tx.OpSession("op1"); sid != "s1" || err != nil {
			t.Errorf("OpSession = %q, %v", sid, err)
		}
		if seq, ok, err := tx.ImportKey("s1", "k1"); seq != 2 || !ok || err != nil {
			t.Errorf("ImportKey = %d, %v, %v", seq, ok, err)
		}
		if p, err := tx.Prefs("s1"); string(p) != `{"a":1}` || err != nil {
			t.Errorf("Prefs = %q, %v", p, err)
		}
		return nil
	})
}

func TestFileModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "weft.db")
	openT(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("file mode = %o, want 600", m)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := di.Mode().Perm(); m != 0o700 {
		t.Errorf("dir mode = %o, want 700", m)
	}
}

func TestInUse(t *testing.T) {
	t.Parallel()
	for _, ro := range []bool{false, true} {
		for _, addr := range []string{"", "127.0.0.1:4242"} {
			t.Run(fmt.Sprintf("readonly=%v addr=%q", ro, addr), func(t *testing.T) {
				t.Parallel()
				_, path := tempDB(t) // held open: the lock the second Open waits for
				if addr != "" {
					if err := os.WriteFile(path+".addr", []byte(addr+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				s2, err := Open(path, Options{Timeout: 200 * time.Millisecond, ReadOnly: ro})
				if el := time.Since(start); el > time.Second {
					t.Errorf("second Open took %v", el)
				}
				if err == nil {
					s2.Close()
					t.Fatal("second Open succeeded")
				}
				if !errors.Is(err, ErrInUse) {
					t.Errorf("error %v does not wrap ErrInUse", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, path) || !strings.Contains(msg, "another process (a running weft)") {
					t.Errorf("error %q does not name the file and a running weft", msg)
				}
				wantAddr := "a weft listening at " + addr + " has it open"
				if addr != "" && !strings.Contains(msg, wantAddr) {
					t.Errorf("error %q does not contain %q", msg, wantAddr)
				}
				if addr == "" && strings.Contains(msg, "listening") {
					t.Errorf("error %q mentions a listener though there is no .addr", msg)
				}
			})
		}
	}
}

// setSchema writes a schema version straight into a closed file.
func setSchema(t *testing.T, path string, v uint32, extra func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bktMeta)
		if err != nil {
			return err
		}
		if err := b.Put(keySchema, binary.BigEndian.AppendUint32(nil, v)); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fileHash is the SHA-256 of a file's bytes.
func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func schemaOf(t *testing.T, path string) uint32 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v uint32
	db.View(func(tx *bolt.Tx) error {
		v = binary.BigEndian.Uint32(tx.Bucket(bktMeta).Get(keySchema))
		return nil
	})
	return v
}

func TestNewFileSchema(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	s.Close()
	if v := schemaOf(t, path); v != currentSchema {
		t.Errorf("new file has schema %d, want %d", v, currentSchema)
	}
}

func TestSchemaTooNew(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	s.Close()
	setSchema(t, path, currentSchema+1, nil)
	for _, ro := range []bool{false, true} {
		_, err := Open(path, Options{ReadOnly: ro})
		if !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("readonly=%v: error %v does not wrap ErrSchemaTooNew", ro, err)
		}
		for _, want := range []string{path, fmt.Sprint("schema ", currentSchema+1), fmt.Sprint("schema ", currentSchema)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	}
	if v := schemaOf(t, path); v != currentSchema+1 {
		t.Errorf("refused file now has schema %d", v)
	}
}

func TestMigration(t *testing.T) {
	t.Parallel()
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	legacy := func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("legacy"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}
	mkOld := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "old.db")
		setSchema(t, path, 0, legacy)
		return path
	}

	t.Run("runs", func(t *testing.T) {
		path := mkOld(t)
		ran := 0
		migrations = map[uint32]func(*bolt.DB, string, *Store) error{
			0: func(src *bolt.DB, _ string, dst *Store) error {
				ran++
				var title string
				src.View(func(tx *bolt.Tx) error {
					title = string(tx.Bucket([]byte("legacy")).Get([]byte("k")))
					return nil
				})
				return dst.update(func(tx *Tx) error { return tx.PutSession(model.Session{ID: "s", Title: title}) })
			},
		}
		s := openT(t, path)
		if ran != 1 {
			t.Errorf("migration ran %d times", ran)
		}
		putSession(t, s, "s2")
		mustView(t, s, func(tx *Tx) error {
			if sess, err := tx.Session("s"); err != nil || sess.Title != "v" {
				t.Errorf("migration's work is missing: %+v, %v", sess, err)
			}
			return nil
		})
		s.db.View(func(tx *bolt.Tx) error {
			if tx.Bucket([]byte("legacy")) != nil {
				t.Error("legacy bucket still there")
			}
			return nil
		})
		s.Close()
		if v := schemaOf(t, path); v != currentSchema {
			t.Errorf("schema after migration = %d", v)
		}
		if _, err := os.Stat(path + ".migrating"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the migration's working file is left: %v", err)
		}
		openT(t, path).Close()
		if ran != 1 {
			t.Errorf("migration ran again on reopen (%d)", ran)
		}
	})

	t.Run("failure leaves file alone", func(t *testing.T) {
		path := mkOld(t)
		before := fileHash(t, path)
		migrations = map[uint32]func(*bolt.DB, string, *Store) error{
			0: func(_ *bolt.DB, _ string, dst *Store) error {
				if err := dst.update(func(tx *Tx) error { return tx.PutSession(model.Session{ID: "half"}) }); err != nil {
					return err
				}
				return errors.New("boom")
			},
		}
		_, err := Open(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), fmt.Sprintf("schema 0 to %d", currentSchema)) {
			t.Fatalf("error = %v", err)
		}
		if after := fileHash(t, path); after != before {
			t.Error("a failed migration changed the file")
		}
		if _, err := os.Stat(path + ".migrating"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the failed migration's working file is left: %v", err)
		}
	})

	t.Run("missing migration", func(t *testing.T) {
		path := mkOld(t)
		migrations = map[uint32]func(*bolt.DB, string, *Store) error{}
		_, err := Open(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "no migration") {
			t.Fatalf("error = %v", err)
		}
	})

	t.Run("read-only refuses to migrate", func(t *testing.T) {
		path := mkOld(t)
		_, err := Open(path, Options{ReadOnly: true})
		if !errors.Is(err, ErrNeedsMigration) || !strings.Contains(err.Error(), path) {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestNotWeft(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("theirs")); return err })
	db.Close()
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "not a weft database") {
		t.Errorf("error = %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("junk", 2048)), 0o600)
	if _, err := Open(junk, Options{}); err == nil || !strings.Contains(err.Error(), junk) {
		t.Errorf("junk file error = %v", err)
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	putSession(t, s, "s")
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.AppendMessages("s", []model.Message{msg(1, model.RoleUser, "x", t0)}); err != nil {
			return err
		}
		return tx.PutPrefs("s", []byte("p"))
	})
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	mustView(t, ro, func(tx *Tx) error {
		if m, err := tx.Message("s", 1); err != nil || m.Content != "x" {
			t.Errorf("Message = %+v, %v", m, err)
		}
		if err := tx.PutPrefs("s", nil); err == nil {
			t.Error("PutPrefs in a read transaction succeeded")
		}
		return nil
	})
	if err := ro.update(func(tx *Tx) error { return nil }); err == nil {
		t.Error("Update on a read-only store succeeded")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{ReadOnly: true}); err == nil {
		t.Error("read-only Open of a missing file succeeded")
	}
}

func TestOps(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	putSession(t, s, "other")
	rev := t0.Add(time.Minute)
	mk := func(id string, typ model.OpType) model.Op {
		return model.Op{ID: id, Type: typ, Targets: []model.ItemID{"m1", "m2"}, Active: true, CreatedAt: t0, Author: "a"}
	}
	mustUpdate(t, s, func(tx *Tx) error {
		for _, op := range []model.Op{mk("01c", model.OpTag), mk("01a", model.OpDigest), mk("01b", model.OpSnip)} {
			if err := tx.PutOp("s", op); err != nil {
				return err
			}
		}
		return tx.PutOp("other", mk("x1", model.OpInsert))
	})
	replaced := mk("01a", model.OpDigest)
	replaced.Active = false
	replaced.RevertedAt = &rev
	replaced.Payload = model.OpPayload{Summary: "sum", SummaryTokens: 3, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "c"}}}
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutOp("s", replaced); err != nil {
			return err
		}
		return tx.PutOp("s", mk("01d", model.OpRevise))
	})
	mustView(t, s, func(tx *Tx) error {
		ops, err := tx.Ops("s")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, op := range ops {
			ids = append(ids, op.ID)
		}
		if want := []string{"01c", "01a", "01b", "01d"}; !slices.Equal(ids, want) {
			t.Errorf("op order = %v, want %v", ids, want)
		}
		if len(ops) == 4 && !reflect.DeepEqual(ops[1], replaced) {
			t.Errorf("replaced op = %+v, want %+v", ops[1], replaced)
		}
		for id, want := range map[string]string{"01a": "s", "01d": "s", "x1": "other"} {
			if got, err := tx.OpSession(id); got != want || err != nil {
				t.Errorf("OpSession(%s) = %q, %v; want %q", id, got, err, want)
			}
		}
		_, err = tx.OpSession("zz")
		if !errors.Is(err, ErrNotFound) || err.Error() != `op "zz" not found` {
			t.Errorf("OpSession(zz) error = %v", err)
		}
		if _, err := tx.Ops("nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Ops(nope) error = %v", err)
		}
		return nil
	})
	err := s.update(func(tx *Tx) error { return tx.PutOp("other", mk("01a", model.OpTag)) })
	if err == nil || !strings.Contains(err.Error(), `belongs to session "s"`) {
		t.Errorf("PutOp of another session's op: %v", err)
	}
	if err := s.update(func(tx *Tx) error { return tx.PutOp("s", model.Op{}) }); err == nil {
		t.Error("PutOp with empty ID succeeded")
	}
	if err := s.update(func(tx *Tx) error { return tx.PutOp("nope", mk("n", model.OpTag)) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("PutOp to missing session: %v", err)
	}
}

func TestImportKeys(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	putSession(t, s, "t")
	mustUpdate(t, s, func(tx *Tx) error {
		if _, ok, err := tx.ImportKey("s", "k"); ok || err != nil {
			t.Errorf("missing key: ok %v err %v", ok, err)
		}
		if err := tx.PutImportKey("s", "k", 42); err != nil {
			return err
		}
		if err := tx.PutImportKey("s", "k2", 1<<40); err != nil {
			return err
		}
		if err := tx.PutImportKey("s", "", 1); err == nil {
			t.Error("empty key accepted")
		}
		return nil
	})
	mustView(t, s, func(tx *Tx) error {
		cases := []struct {
			sess, key string
			seq       uint64
			ok        bool
		}{
			{"s", "k", 42, true},
			{"s", "k2", 1 << 40, true},
			{"s", "k3", 0, false},
			{"s", "", 0, false},
			{"t", "k", 0, false},
		}
		for _, c := range cases {
			seq, ok, err := tx.ImportKey(c.sess, c.key)
			if seq != c.seq || ok != c.ok || err != nil {
				t.Errorf("ImportKey(%s, %s) = %d, %v, %v", c.sess, c.key, seq, ok, err)
			}
		}
		if _, _, err := tx.ImportKey("nope", "k"); !errors.Is(err, ErrNotFound) {
			t.Errorf("ImportKey on missing session: %v", err)
		}
		return nil
	})
}

func TestPrefs(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	mustUpdate(t, s, func(tx *Tx) error {
		if p, err := tx.Prefs("s"); p != nil || err != nil {
			t.Errorf("Prefs with none = %q, %v", p, err)
		}
		if err := tx.PutPrefs("s", []byte(`{"first":1}`)); err != nil {
			return err
		}
		buf := []byte(`{"second":2}`)
		if err := tx.PutPrefs("s", buf); err != nil {
			return err
		}
		copy(buf, "XXXXXXXXXX") // the store kept its own copy
		return nil
	})
	if err := s.view(func(tx *Tx) error {
		p, err := tx.Prefs("s")
		if string(p) != `{"second":2}` || err != nil {
			t.Errorf("Prefs = %q, %v", p, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutPrefs("s", nil) }) // clears
	if err := s.view(func(tx *Tx) error {
		if p, err := tx.Prefs("s"); p != nil || err != nil {
			t.Errorf("Prefs after clearing = %q, %v", p, err)
		}
		if _, err := tx.Prefs("nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Prefs on missing session: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestTimeIndex(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	epoch := time.Unix(0, 0).UTC()
	times := []time.Time{
		t0.Add(5 * time.Second),
		time.Date(1950, 6, 1, 0, 0, 0, 0, time.UTC),
		t0.Add(5 * time.Second), // equal to seq 1
		t0,
		epoch.Add(-1), // 1969-12-31T23:59:59.999999999
		epoch,
		t0.Add(time.Nanosecond),
		time.Date(1950, 6, 1, 0, 0, 0, 0, time.UTC), // equal to seq 2
		time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC),
		t0.Add(5 * time.Second), // equal to seqs 1 and 3
	}
	// Two transactions, so bytime sees inserts before existing keys.
	var ms []model.Message
	for i, at := range times {
		ms = append(ms, msg(uint64(i+1), model.RoleUser, "x", at))
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms[:4]) })
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms[4:]) })

	type ev struct {
		seq uint64
		at  int64
	}
	var sorted []ev
	for i, at := range times {
		sorted = append(sorted, ev{uint64(i + 1), at.UnixNano()})
	}
	slices.SortFunc(sorted, func(a, b ev) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return int(a.seq) - int(b.seq)
	})
	asc := func(from time.Time) []ev {
		var out []ev
		for _, e := range sorted {
			if e.at >= from.UnixNano() {
				out = append(out, e)
			}
		}
		return out
	}
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	points := []struct {
		name string
		at   time.Time
	}{
		{"zero time", time.Time{}},
		{"far future", far},
		{"1700", times[8]},
		{"1950", times[1]},
		{"before epoch", epoch.Add(-1)},
		{"epoch", epoch},
		{"t0", t0},
		{"t0+1ns", t0.Add(1)},
		{"t0+2ns", t0.Add(2)},
		{"t0+5s", t0.Add(5 * time.Second)},
		{"after all", t0.Add(6 * time.Second)},
		{"non-UTC", t0.In(time.FixedZone("x", -3600))},
	}
	mustView(t, s, func(tx *Tx) error {
		for _, p := range points {
			var got []ev
			if err := tx.TimeAscend("s", p.at, func(seq uint64, at int64) bool { got = append(got, ev{seq, at}); return true }); err != nil {
				t.Fatal(err)
			}
			want := asc(p.at)
			switch p.name {
			case "zero time":
				want = sorted
			case "far future":
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("TimeAscend(%s) = %v, want %v", p.name, got, want)
			}
		}
		// Stopping early.
		n := 0
		tx.TimeAscend("s", time.Time{}, func(uint64, int64) bool { n++; return n < 3 })
		if n != 3 {
			t.Errorf("TimeAscend called fn %d times after it returned false", n)
		}
		if err := tx.TimeAscend("nope", t0, func(uint64, int64) bool { return true }); !errors.Is(err, ErrNotFound) {
			t.Errorf("TimeAscend on missing session: %v", err)
		}
		return nil
	})
}

func TestHeadsAcrossChunks(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	putSession(t, s, "s")
	putSession(t, s, "empty")
	batches := []int{1, 1022, 1, 1, 1, 1024, 7, 443} // 2500 in all, crossing 1024 and 2048 mid-batch and exactly
	var all []model.Message
	seq := uint64(0)
	check := func(s *Store) {
		t.Helper()
		mustView(t, s, func(tx *Tx) error {
			heads, err := tx.Heads("s")
			if err != nil {
				t.Fatal(err)
			}
			if len(heads) != len(all) {
				t.Fatalf("Heads has %d, want %d", len(heads), len(all))
			}
			for i := range all {
				if heads[i] != all[i].Head() {
					t.Fatalf("head of seq %d = %+v, want %+v", i+1, heads[i], all[i].Head())
				}
			}
			return nil
		})
	}
	for bi, n := range batches {
		var ms []model.Message
		for range n {
			seq++
			role := model.Roles[seq%4]
			m := msg(seq, role, strings.Repeat("w", int(seq%50)), time.Unix(int64(seq)*1000-1_000_000, int64(seq)).UTC())
			m.Tokens = int(seq) * 3
			if seq%7 == 0 {
				m.Parts = json.RawMessage(`{"p":1}`)
			}
			if seq == 2000 {
				m.Tokens = math.MaxInt // clamps in the head
			}
			ms = append(ms, m)
		}
		mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
		all = append(all, ms...)
		if bi%2 == 1 {
			check(s)
		}
	}
	check(s)
	s.Close()
	s = openT(t, path)
	check(s)
	mustView(t, s, func(tx *Tx) error {
		if h, err := tx.Heads("empty"); len(h) != 0 || err != nil {
			t.Errorf("Heads(empty) = %v, %v", h, err)
		}
		if _, err := tx.Heads("nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Heads(nope): %v", err)
		}
		return nil
	})
}

func TestScanContent(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "s")
	var ms []model.Message
	for i := range 10 {
		m := msg(uint64(i+1), model.RoleUser, fmt.Sprintf("content %d ✓", i+1), t0)
		m.Meta = map[string]string{"k": "v"}
		m.Parts = json.RawMessage(`[1]`)
		ms = append(ms, m)
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
	mustView(t, s, func(tx *Tx) error {
		for _, stopAt := range []int{1, 3, 10, 100} {
			var seqs []uint64
			err := tx.ScanContent("s", func(seq uint64, content []byte) bool {
				if want := fmt.Sprintf("content %d ✓", seq); string(content) != want {
					t.Errorf("seq %d content %q, want %q", seq, content, want)
				}
				seqs = append(seqs, seq)
				return len(seqs) < stopAt
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := min(stopAt, 10); len(seqs) != want || seqs[len(seqs)-1] != uint64(want) {
				t.Errorf("stop at %d: scanned %v", stopAt, seqs)
			}
		}
		if err := tx.ScanContent("nope", func(uint64, []byte) bool { return true }); !errors.Is(err, ErrNotFound) {
			t.Errorf("ScanContent(nope): %v", err)
		}
		return nil
	})
}

func TestFailingUpdateLeavesNothing(t *testing.T) {
	t.Parallel()
	s, _ := tempDB(t)
	putSession(t, s, "old")
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.AppendMessages("old", []model.Message{msg(1, model.RoleUser, "one", t0)})
	})
	boom := errors.New("boom")
	err := s.update(func(tx *Tx) error {
		if err := tx.PutSession(model.Session{ID: "new"}); err != nil {
			return err
		}
		if err := tx.AppendMessages("new", []model.Message{msg(1, model.RoleUser, "x", t0)}); err != nil {
			return err
		}
		if err := tx.AppendMessages("old", []model.Message{msg(2, model.RoleUser, "two", t0)}); err != nil {
			return err
		}
		if err := tx.PutSession(model.Session{ID: "old", Title: "changed"}); err != nil {
			return err
		}
		if err := tx.PutOp("old", model.Op{ID: "op", Type: model.OpTag}); err != nil {
			return err
		}
		if err := tx.PutImportKey("old", "k", 2); err != nil {
			return err
		}
		if err := tx.PutPrefs("old", []byte("p")); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update error = %v", err)
	}
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Session("new"); !errors.Is(err, ErrNotFound) {
			t.Errorf("new session survived: %v", err)
		}
		if _, err := tx.LastSeq("new"); !errors.Is(err, ErrNotFound) {
			t.Errorf("new session's buckets survived: %v", err)
		}
		if sess, _ := tx.Session("old"); sess.Title != "title of old" {
			t.Errorf("old session changed: %+v", sess)
		}
		if last, _ := tx.LastSeq("old"); last != 1 {
			t.Errorf("LastSeq(old) = %d", last)
		}
		if h, _ := tx.Heads("old"); len(h) != 1 {
			t.Errorf("Heads(old) has %d", len(h))
		}
		n := 0
		tx.TimeAscend("old", time.Time{}, func(uint64, int64) bool { n++; return true })
		if n != 1 {
			t.Errorf("bytime has %d entries", n)
		}
		if ops, _ := tx.Ops("old"); len(ops) != 0 {
			t.Errorf("ops survived: %v", ops)
		}
		if _, err := tx.OpSession("op"); !errors.Is(err, ErrNotFound) {
			t.Errorf("op index survived: %v", err)
		}
		if _, ok, _ := tx.ImportKey("old", "k"); ok {
			t.Error("import key survived")
		}
		return nil
	})
	mustUpdate(t, s, func(tx *Tx) error {
		if p, _ := tx.Prefs("old"); p != nil {
			t.Errorf("prefs survived: %q", p)
		}
		return nil
	})
	// A panic rolls back too.
	func() {
		defer func() { recover() }()
		s.update(func(tx *Tx) error {
			tx.PutSession(model.Session{ID: "panicky"})
			panic("oops")
		})
	}()
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Session("panicky"); !errors.Is(err, ErrNotFound) {
			t.Errorf("session from panicking Update survived: %v", err)
		}
		return nil
	})
}

func TestCorruptValues(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	putSession(t, s, "s")
	m := msg(1, model.RoleTool, "some content", t0)
	m.Name = "n"
	m.Parts = json.RawMessage(`[1,2]`)
	m.Meta = map[string]string{"a": "b", "c": "d"}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", []model.Message{m}) })
	good := record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.PackParts(&m))
	// the meta field last: its length and count (a byte each), then a,
	// b, c and d, each its length and itself
	partsEnd := len(good) - 10
	const num = 1 // the first session's number

	raw := func(bucket []byte, k, v []byte) {
		t.Helper()
		err := s.db.Update(func(tx *bolt.Tx) error {
			if v == nil {
				return tx.Bucket(bucket).Delete(k)
			}
			return tx.Bucket(bucket).Put(k, v)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var bads [][]byte
	for n := range len(good) {
		bads = append(bads, good[:n])
	}
	bads = append(bads,
		append(slices.Clone(good), 0),                     // stray byte
		append([]byte{9}, good[1:]...),                    // unknown format
		append([]byte{1, 0}, good[2:]...),                 // unknown role
		append(slices.Clone(good[:11]), 0xff, 0xff, 0xff), // bad varint
	)
	for i, bad := range bads {
		raw(bktMsgs, key(num, put64(1)), bad)
		s.view(func(tx *Tx) error {
			_, err := tx.Message("s", 1)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Session != "s" || ce.Record != "message 1" ||
				!strings.Contains(err.Error(), `session "s"`) || !strings.Contains(err.Error(), "message 1") || !strings.Contains(err.Error(), path) {
				t.Errorf("case %d (%x): Message error = %v", i, bad, err)
			}
			if err := tx.Messages("s", 1, 1, func(model.Message) error { return nil }); !errors.Is(err, ErrCorrupt) {
				t.Errorf("case %d: Messages error = %v", i, err)
			}
			// Heads reads a record up to its parts: a record cut
			// before their end is corrupt to it too.
			if _, err := tx.Heads("s"); !errors.Is(err, ErrCorrupt) && len(bad) < partsEnd {
				t.Errorf("case %d: Heads error = %v", i, err)
			}
			// ScanContent only needs the content, so a record broken
			// after it still scans; it must not panic either way.
			tx.ScanContent("s", func(uint64, []byte) bool { return true })
			return nil
		})
	}
	raw(bktMsgs, key(num, put64(1)), good)
	mustView(t, s, func(tx *Tx) error {
		got, err := tx.Message("s", 1)
		if err != nil {
			t.Fatal(err)
		}
		sameMessage(t, got, m)
		return nil
	})

	// A heads chunk where no complete chunk is.
	raw(bktHeads, key(num, put64(0)), []byte{1, 2, 3})
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Heads("s"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `session "s"`) {
			t.Errorf("Heads on a stray chunk: %v", err)
		}
		return nil
	})
	raw(bktHeads, key(num, put64(0)), nil)

	// A stray huge message key must not make Heads allocate for it, and a
	// key of the wrong size is reported, not misread.
	for _, k := range [][]byte{put64(1 << 62), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}} {
		raw(bktMsgs, key(num, k), good)
		mustView(t, s, func(tx *Tx) error {
			if _, err := tx.Heads("s"); err == nil || !strings.Contains(err.Error(), "corrupt") {
				t.Errorf("key %x: Heads error = %v", k, err)
			}
			if len(k) != 8 {
				if err := tx.ScanContent("s", func(uint64, []byte) bool { return true }); err == nil {
					t.Errorf("key %x: ScanContent succeeded", k)
				}
				if _, err := tx.LastSeq("s"); err == nil {
					t.Errorf("key %x: LastSeq succeeded", k)
				}
			}
			return nil
		})
		raw(bktMsgs, key(num, k), nil)
	}

	// A broken operation, session record and import key.
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutOp("s", model.Op{ID: "op1", Type: model.OpTag}) })
	raw(bktOps, key(num, put64(1)), []byte("{not json"))
	mustView(t, s, func(tx *Tx) error {
		_, err := tx.Ops("s")
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Session != "s" || !strings.HasPrefix(ce.Record, "op #") {
			t.Errorf("Ops error = %v", err)
		}
		return nil
	})
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutImportKey("s", "k", 1) })
	raw(bktKeys, key(num, []byte("k")), []byte{0x80})
	mustView(t, s, func(tx *Tx) error {
		if _, _, err := tx.ImportKey("s", "k"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ImportKey error = %v", err)
		}
		return nil
	})
	raw(bktSessions, []byte("s"), []byte{record.Format1, 0, 0, 0, num, 0xff})
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Session("s"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Session error = %v", err)
		}
		if _, err := tx.Sessions(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Sessions error = %v", err)
		}
		if got, bad := tx.AllSessions(); len(got) != 0 || len(bad) != 1 || !errors.Is(bad[0], ErrCorrupt) {
			t.Errorf("AllSessions = %v, %v", got, bad)
		}
		// The record's number is still readable: its messages are.
		if _, err := tx.Message("s", 1); err != nil {
			t.Errorf("Message of a session with a broken record: %v", err)
		}
		return nil
	})
}

func FuzzDecodeMessage(f *testing.F) {
	m := msg(1, model.RoleUser, "hello", t0)
	m.Meta = map[string]string{"k": "v"}
	m.Parts = json.RawMessage(`{}`)
	f.Add(record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.PackParts(&m)))
	f.Add([]byte{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		record.DecodeMessage(b, 1)
		record.ContentOf(b)
	})
}

func TestEncodedLen(t *testing.T) {
	t.Parallel()
	for _, tokens := range []int{0, 1, -1, 63, 64, -64, -65, 1 << 20, math.MinInt, math.MinInt + 5, math.MaxInt} {
		m := msg(1, model.RoleUser, strings.Repeat("x", 200), t0)
		m.Tokens = tokens
		m.Meta = map[string]string{strings.Repeat("k", 130): strings.Repeat("v", 20000)}
		if got, want := len(record.AppendMessage(nil, &m, 0, record.PackParts(&m))), record.MessageLen(&m, record.PackParts(&m)); got != want {
			t.Errorf("tokens %d: encoded %d bytes, encodedLen says %d", tokens, got, want)
		}
	}
}

func TestSourceSessions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "src.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.update(func(tx *Tx) error { return tx.PutSourceSession("claude-code:abc", "s1") }); err != nil {
		t.Fatal(err)
	}
	if err := s.update(func(tx *Tx) error { return tx.PutSourceSession("", "s1") }); err == nil {
		t.Error("an empty source key was accepted")
	}
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.view(func(tx *Tx) error {
		if sid, ok := tx.SourceSession("claude-code:abc"); !ok || sid != "s1" {
			t.Errorf("SourceSession = %q, %v", sid, ok)
		}
		if _, ok := tx.SourceSession("claude-code:other"); ok {
			t.Error("unknown source found")
		}
		return nil
	})
}
