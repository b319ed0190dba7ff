package boltstore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
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

// fixtureSession is one session of a test file: what it holds.
type fixtureSession struct {
	info   model.Session
	msgs   []model.Message
	ops    []model.Op
	keys   map[string]uint64
	prefs  []byte
	source string
}

// fixture makes sessions of every shape: one long enough to fill heads
// chunks and out of time order, one in order, one with tool parts and
// meta, one empty.
func fixture() []fixtureSession {
	r := rand.New(rand.NewPCG(1, 2))
	mk := func(id string, n int, sorted bool) fixtureSession {
		fs := fixtureSession{
			info: model.Session{ID: id, Title: "title of " + id, CreatedAt: t0, UpdatedAt: t0.Add(time.Hour),
				Source: "test", Interface: "cli", Room: "r", ActiveTags: []string{"a", "b"}},
			keys: map[string]uint64{},
		}
		for i := 1; i <= n; i++ {
			at := t0.Add(time.Duration(i) * time.Second)
			if !sorted && i%97 == 0 {
				at = t0.Add(-time.Duration(r.IntN(1000)) * time.Minute)
			}
			role := []model.Role{model.RoleUser, model.RoleAssistant, model.RoleTool, model.RoleSystem}[i%4]
			m := msg(uint64(i), role, fmt.Sprintf("message %d of %s: %s", i, id, strings.Repeat("x", r.IntN(300))), at)
			if i%50 == 0 {
				m.Parts = json.RawMessage(`[{"type":"tool_call","id":"c1"}]`)
				m.Meta = map[string]string{"model": "m", "n": fmt.Sprint(i)}
				m.Name = "tool"
			}
			fs.msgs = append(fs.msgs, m)
			fs.info.Tokens += m.Tokens
			if i%3 == 0 {
				fs.keys[fmt.Sprintf("%s\x00%d", id, i)] = uint64(i)
			}
		}
		fs.info.MessageCount = n
		for i := range min(n/100, 5) {
			op := model.Op{ID: fmt.Sprintf("%s-op%d", id, i), Type: model.OpDigest, Targets: []model.ItemID{"m1", "m2"},
				Payload: model.OpPayload{Summary: "sum"}, Active: i%2 == 0, CreatedAt: t0, Author: "a", Version: uint64(i + 1)}
			fs.ops = append(fs.ops, op)
		}
		fs.info.OpCount = len(fs.ops)
		for i := range 3 {
			fs.info.Record(t0.Add(time.Duration(i)*time.Minute), "operator", fmt.Sprintf("change %d", i))
		}
		return fs
	}
	long := mk("long", 2600, false)
	long.prefs = []byte(`{"pending":true}`)
	long.source = "claude-code:abc"
	return []fixtureSession{long, mk("sorted", 1500, true), mk("small", 7, true), mk("empty", 0, true)}
}

// writeSchema1 writes sessions into a new file in schema 1's layout,
// byte for byte as weft wrote it before schema 2: the fixture of the
// migration's tests, made by code rather than kept as a binary.
func writeSchema1(t testing.TB, path string, sessions []fixtureSession) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		top := map[string]*bolt.Bucket{}
		for _, name := range []string{"meta", "sessions", "opindex", "threads", "sources"} {
			b, err := tx.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			top[name] = b
		}
		if err := top["meta"].Put([]byte("schema"), binary.BigEndian.AppendUint32(nil, 1)); err != nil {
			return err
		}
		for _, fs := range sessions {
			id := fs.info.ID
			data, _ := json.Marshal(fs.info)
			if err := top["sessions"].Put([]byte(id), data); err != nil {
				return err
			}
			th, err := top["threads"].CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			sub := map[string]*bolt.Bucket{}
			for _, name := range []string{"msgs", "bytime", "heads", "ops", "keys", "prefs"} {
				if sub[name], err = th.CreateBucket([]byte(name)); err != nil {
					return err
				}
			}
			for _, m := range fs.msgs {
				at := m.CreatedAt.UnixNano()
				// A file of schema 1 has its parts as they are.
				if err := sub["msgs"].Put(put64(m.Seq), record.AppendMessage(nil, &m, at, record.AsIs(&m))); err != nil {
					return err
				}
				if err := sub["bytime"].Put(timeKey(at, m.Seq), []byte{}); err != nil {
					return err
				}
			}
			for c := 0; c*headsPerChunk < len(fs.msgs); c++ {
				part := fs.msgs[c*headsPerChunk : min(len(fs.msgs), (c+1)*headsPerChunk)]
				v := make([]byte, len(part)*record.HeadLen)
				for i, m := range part {
					record.PutHead(v[i*record.HeadLen:], m.Head())
				}
				if err := sub["heads"].Put(put64(uint64(c)), v); err != nil {
					return err
				}
			}
			for _, op := range fs.ops {
				n, _ := sub["ops"].NextSequence()
				data, _ := json.Marshal(op)
				if err := sub["ops"].Put(put64(n), data); err != nil {
					return err
				}
				if err := top["opindex"].Put([]byte(op.ID), append([]byte(id), put64(n)...)); err != nil {
					return err
				}
			}
			for _, k := range slices.Sorted(maps.Keys(fs.keys)) {
				if err := sub["keys"].Put([]byte(k), put64(fs.keys[k])); err != nil {
					return err
				}
			}
			if fs.prefs != nil {
				if err := sub["prefs"].Put([]byte("pending"), fs.prefs); err != nil {
					return err
				}
			}
			if fs.source != "" {
				if err := top["sources"].Put([]byte(fs.source), []byte(id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeCurrent writes sessions through the Tx methods.
func writeCurrent(t testing.TB, s *Store, sessions []fixtureSession) {
	t.Helper()
	for _, fs := range sessions {
		mustUpdate(t, s, func(tx *Tx) error {
			if err := tx.PutSession(fs.info); err != nil {
				return err
			}
			if err := tx.AppendMessages(fs.info.ID, fs.msgs); err != nil {
				return err
			}
			for _, op := range fs.ops {
				if err := tx.PutOp(fs.info.ID, op); err != nil {
					return err
				}
			}
			for _, k := range slices.Sorted(maps.Keys(fs.keys)) {
				if err := tx.PutImportKey(fs.info.ID, k, fs.keys[k]); err != nil {
					return err
				}
			}
			if fs.prefs != nil {
				if err := tx.PutPrefs(fs.info.ID, fs.prefs); err != nil {
					return err
				}
			}
			if fs.source != "" {
				return tx.PutSourceSession(fs.source, fs.info.ID)
			}
			return nil
		})
	}
}

// holds checks that s holds exactly the sessions given, through every
// read a caller has.
func holds(t *testing.T, s *Store, sessions []fixtureSession) {
	t.Helper()
	mustView(t, s, func(tx *Tx) error {
		all, err := tx.Sessions()
		if err != nil || len(all) != len(sessions) {
			t.Fatalf("Sessions = %d, %v; want %d", len(all), err, len(sessions))
		}
		for _, fs := range sessions {
			id := fs.info.ID
			got, err := tx.Session(id)
			if err != nil || !reflect.DeepEqual(got, fs.info) {
				t.Errorf("session %s:\n got %+v, %v\nwant %+v", id, got, err, fs.info)
			}
			var msgs []model.Message
			if err := tx.Messages(id, 1, 1<<62, func(m model.Message) error { msgs = append(msgs, m); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(msgs) != len(fs.msgs) {
				t.Fatalf("session %s: %d messages, want %d", id, len(msgs), len(fs.msgs))
			}
			for i := range msgs {
				sameMessage(t, msgs[i], fs.msgs[i])
			}
			heads, err := tx.Heads(id)
			if err != nil || len(heads) != len(fs.msgs) {
				t.Fatalf("session %s: Heads = %d, %v", id, len(heads), err)
			}
			for i, m := range fs.msgs {
				if heads[i] != m.Head() {
					t.Fatalf("session %s: head %d = %+v, want %+v", id, i+1, heads[i], m.Head())
				}
			}
			if last, err := tx.LastSeq(id); err != nil || last != uint64(len(fs.msgs)) {
				t.Errorf("session %s: LastSeq = %d, %v", id, last, err)
			}
			ops, err := tx.Ops(id)
			if err != nil || !reflect.DeepEqual(ops, fs.ops) {
				t.Errorf("session %s: ops = %+v, %v; want %+v", id, ops, err, fs.ops)
			}
			for _, op := range fs.ops {
				if sid, err := tx.OpSession(op.ID); sid != id || err != nil {
					t.Errorf("OpSession(%s) = %q, %v", op.ID, sid, err)
				}
			}
			for k, seq := range fs.keys {
				if got, ok, err := tx.ImportKey(id, k); got != seq || !ok || err != nil {
					t.Errorf("session %s: ImportKey(%q) = %d, %v, %v", id, k, got, ok, err)
				}
			}
			if p, err := tx.Prefs(id); string(p) != string(fs.prefs) || err != nil {
				t.Errorf("session %s: Prefs = %q, %v", id, p, err)
			}
			if fs.source != "" {
				if sid, ok := tx.SourceSession(fs.source); sid != id || !ok {
					t.Errorf("SourceSession(%s) = %q, %v", fs.source, sid, ok)
				}
			}
			timeOrder(t, tx, id, fs.msgs)
		}
		return nil
	})
}

// timeOrder checks TimeAscend against a sort of the messages, from a few
// points.
func timeOrder(t *testing.T, tx *Tx, id string, msgs []model.Message) {
	t.Helper()
	type ev struct {
		seq uint64
		at  int64
	}
	var want []ev
	for _, m := range msgs {
		want = append(want, ev{m.Seq, m.CreatedAt.UnixNano()})
	}
	slices.SortStableFunc(want, func(a, b ev) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	froms := []time.Time{{}, t0, t0.Add(-time.Hour)}
	for _, m := range msgs {
		if m.Seq%331 == 0 || m.Seq == uint64(len(msgs)) {
			froms = append(froms, m.CreatedAt, m.CreatedAt.Add(1))
		}
	}
	for _, from := range froms {
		var got []ev
		if err := tx.TimeAscend(id, from, func(seq uint64, at int64) bool { got = append(got, ev{seq, at}); return true }); err != nil {
			t.Fatal(err)
		}
		var w []ev
		for _, e := range want {
			if e.at >= from.UnixNano() || from.IsZero() {
				w = append(w, e)
			}
		}
		if !slices.Equal(got, w) {
			t.Fatalf("session %s: TimeAscend(%v) gives %d events, want %d (first %v / %v)", id, from, len(got), len(w), first(got), first(w))
		}
	}
}

func first[T any](s []T) []T { return s[:min(len(s), 3)] }

func TestMigrateSchema1(t *testing.T) {
	t.Parallel()
	sessions := fixture()
	path := filepath.Join(t.TempDir(), "v1.db")
	writeSchema1(t, path, sessions)
	before, _ := os.Stat(path)
	if v := schemaOf(t, path); v != 1 {
		t.Fatalf("fixture has schema %d", v)
	}
	s := openT(t, path)
	holds(t, s, sessions)
	// The migrated file takes new writes as any other.
	putSession(t, s, "new")
	mustUpdate(t, s, func(tx *Tx) error {
		info, err := tx.Session("long")
		if err != nil {
			return err
		}
		info.MessageCount++
		if err := tx.PutSession(info); err != nil {
			return err
		}
		return tx.AppendMessages("long", []model.Message{msg(2601, model.RoleUser, "more", t0.Add(time.Hour))})
	})
	s.Close()
	if v := schemaOf(t, path); v != currentSchema {
		t.Errorf("schema after migration = %d", v)
	}
	after, _ := os.Stat(path)
	if after.Size() > before.Size() {
		t.Errorf("migration grew the file from %d to %d bytes", before.Size(), after.Size())
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("migrated file mode %o", after.Mode().Perm())
	}
	if findings, err := Check(path); err != nil || len(findings) > 0 {
		t.Errorf("Check of the migrated file: %v, %v", findings, err)
	}
}

func TestCurrentLayoutRoundTrip(t *testing.T) {
	t.Parallel()
	sessions := fixture()
	s, _ := tempDB(t)
	writeCurrent(t, s, sessions)
	holds(t, s, sessions)
}

// TestTimeOrderAcrossAppends: a session stays without a time index while
// its appends are in time order and it is under 1024 messages, gets one
// when an append breaks the order or reaches 1024, and TimeAscend agrees
// with a sort either way.
func TestTimeOrderAcrossAppends(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 6 {
		s, _ := tempDB(t)
		putSession(t, s, "s")
		var all []model.Message
		broken := -1
		for batch := 0; len(all) < 3000; batch++ {
			n := 1 + r.IntN(700)
			var ms []model.Message
			for range n {
				seq := uint64(len(all) + len(ms) + 1)
				at := t0.Add(time.Duration(seq) * time.Second)
				if trial > 0 && batch == trial && len(ms) == n/2 {
					at = t0.Add(-time.Hour) // out of order
					broken = batch
				}
				ms = append(ms, msg(seq, model.RoleUser, "x", at))
			}
			mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
			all = append(all, ms...)
			indexed := false
			s.db.View(func(tx *bolt.Tx) error { indexed = hasRecords(tx.Bucket(bktByTime), 1); return nil })
			if want := broken >= 0 || len(all) >= headsPerChunk; indexed != want {
				t.Fatalf("trial %d batch %d: time index present = %v, want %v", trial, batch, indexed, want)
			}
			mustView(t, s, func(tx *Tx) error { timeOrder(t, tx, "s", all); return nil })
			lo, hi := all[0].CreatedAt.UnixNano(), all[0].CreatedAt.UnixNano()
			for _, m := range all {
				lo, hi = min(lo, m.CreatedAt.UnixNano()), max(hi, m.CreatedAt.UnixNano())
			}
			mustView(t, s, func(tx *Tx) error {
				if first, latest, ok, err := tx.TimeSpan("s"); err != nil || !ok || first != lo || latest != hi {
					t.Fatalf("trial %d batch %d (indexed %v): span %d..%d ok=%v err=%v, want %d..%d", trial, batch, indexed, first, latest, ok, err, lo, hi)
				}
				return nil
			})
		}
	}
	// A session without messages has no span.
	s, _ := tempDB(t)
	putSession(t, s, "empty")
	mustView(t, s, func(tx *Tx) error {
		if _, _, ok, err := tx.TimeSpan("empty"); ok || err != nil {
			t.Fatalf("an empty session's span: ok=%v err=%v", ok, err)
		}
		return nil
	})
}

// TestSessionRecordKeepsEveryField fills every field of model.Session
// (and of its changes) and reads the record back: a field added to the
// model that the record format does not keep fails here.
func TestSessionRecordKeepsEveryField(t *testing.T) {
	t.Parallel()
	var s model.Session
	fill(reflect.ValueOf(&s).Elem(), 1)
	got, num, err := record.Decode(s.ID, record.Append(nil, 42, &s))
	if err != nil || num != 42 {
		t.Fatalf("decode: %v, num %d", err, num)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("the session record does not keep every field of model.Session (store/record.go):\n got %+v\nwant %+v", got, s)
	}
	// A fork without a memory policy, and a policy without a fork.
	for _, x := range []model.Session{{ID: "f", ForkOf: s.ForkOf}, {ID: "m", Memory: s.Memory}} {
		got, _, err := record.Decode(x.ID, record.Append(nil, 1, &x))
		if err != nil || !reflect.DeepEqual(got, x) {
			t.Errorf("fork %v, policy %v:\n got %+v, %v\nwant %+v", x.ForkOf != nil, x.Memory != nil, got, err, x)
		}
	}
	// Zero and far times, negative counts.
	for _, at := range []time.Time{{}, time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)} {
		s := model.Session{ID: "x", CreatedAt: at, UpdatedAt: t0, Tokens: -5, Changes: []model.Change{{At: at}, {At: t0.Add(-time.Nanosecond)}}}
		got, _, err := record.Decode("x", record.Append(nil, 1, &s))
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("time %v:\n got %+v, %v\nwant %+v", at, got, err, s)
		}
	}
	// Every truncation is an error, never a panic.
	rec := record.Append(nil, 42, &s)
	for n := range len(rec) {
		if _, _, err := record.Decode("x", rec[:n]); err == nil {
			t.Errorf("a record cut to %d bytes decoded", n)
		}
	}
}

// fill sets every field reachable from v to a value other than its zero.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d", n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n * 7))
	case reflect.Uint64, reflect.Uint32:
		v.SetUint(uint64(n * 11))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), n*10+i)
		}
		v.Set(s)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(t0.Add(time.Duration(n) * time.Millisecond)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), n*10+i)
		}
	default:
		panic(fmt.Sprintf("fill: a field of kind %s: teach fill (and store/record.go) about it", v.Kind()))
	}
}

// TestMigrateDamagedSchema1: a schema-1 file with a record that cannot be
// read is not migrated (the file stays as it was, and the error says how
// to salvage it); salvage reads it.
func TestMigrateDamagedSchema1(t *testing.T) {
	t.Parallel()
	sessions := fixture()
	path := filepath.Join(t.TempDir(), "v1.db")
	writeSchema1(t, path, sessions)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bktThreads).Bucket([]byte("sorted")).Bucket(bktMsgs).Put(put64(10), []byte{1})
	})
	before := fileHash(t, path)
	_, err := Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "weft salvage --db "+path) || !strings.Contains(err.Error(), `session "sorted": message 10`) {
		t.Fatalf("Open of a damaged schema-1 file: %v", err)
	}
	if fileHash(t, path) != before {
		t.Error("the failed migration changed the file")
	}
	findings, err := Check(path)
	if err != nil || len(findings) == 0 {
		t.Errorf("Check of a damaged schema-1 file: %v, %v", findings, err)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	rep, err := Salvage(path, out)
	if err != nil || rep.Placeholders != 1 || rep.Sessions != len(sessions) {
		t.Fatalf("Salvage: %+v, %v", rep, err)
	}
	if f, err := Check(out); err != nil || len(f) > 0 {
		t.Errorf("the salvaged file: %v, %v", f, err)
	}
}
