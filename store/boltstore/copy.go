package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

// One copier serves the migration from schema 1 (every record must be
// read, or the migration fails and the file stays as it was) and Salvage
// (what cannot be read is skipped and reported). It reads the source file
// in read transactions under guard, so a damaged page costs the records on
// it, and writes the destination through the Tx methods, so what it writes
// is consistent by construction.

// layout says where a file of one schema keeps a session's records.
type layout interface {
	// session decodes the record stored under id in the sessions bucket
	// and says where the session's records are. On error, place is
	// still good when ok.
	session(id string, v []byte) (s model.Session, p place, ok bool, err error)
	// records returns the bucket holding a session's records of a kind
	// (bktMsgs, bktOps, bktKeys) and the prefix of their keys there.
	records(tx *bolt.Tx, p place, kind []byte) (*bolt.Bucket, []byte)
	// importSeq decodes an import key's value.
	importSeq(v []byte) (uint64, bool)
	// prefs returns a session's pending preferences.
	prefs(tx *bolt.Tx, p place) []byte
	// numbered reports whether records are found by session number, so
	// records whose session has no readable record can be found.
	numbered() bool
}

// place is where a session's records are: by ID (schema 1) or number.
type place struct {
	id  string
	num uint32
}

// layout2 is the current layout.
type layout2 struct{}

func (layout2) session(id string, v []byte) (model.Session, place, bool, error) {
	s, num, err := record.Decode(id, v)
	if err != nil {
		n, nerr := record.Num(v)
		return model.Session{}, place{id: id, num: n}, nerr == nil, err
	}
	return s, place{id: id, num: num}, true, nil
}

func (layout2) records(tx *bolt.Tx, p place, kind []byte) (*bolt.Bucket, []byte) {
	return tx.Bucket(kind), key(p.num)
}

func (layout2) importSeq(v []byte) (uint64, bool) {
	seq, n := binary.Uvarint(v)
	return seq, n == len(v) && seq > 0
}

func (layout2) prefs(tx *bolt.Tx, p place) []byte {
	if b := tx.Bucket(bktPrefs); b != nil {
		return b.Get(key(p.num))
	}
	return nil
}

func (layout2) numbered() bool { return true }

// copyReport counts what a copy wrote and lists what it could not read.
type copyReport struct {
	sessions, messages, placeholders, ops, keys, sources int
	skipped                                              []string
}

// copier copies sessions from a source file into a store.
type copier struct {
	src     *bolt.DB
	srcPath string
	lay     layout
	dst     *Store
	strict  bool
	rep     copyReport

	buf     []func(*Tx) error
	bufSize int
	copied  map[string]bool   // session IDs written
	nums    map[uint32]string // session numbers seen, schema 2
}

// flushAt is how much a destination transaction takes, in bytes of
// records (about).
const flushAt = 8 << 20

// errStop ends a scan early without being a problem.
var errStop = errors.New("stop")

func newCopier(src *bolt.DB, srcPath string, lay layout, dst *Store, strict bool) *copier {
	return &copier{src: src, srcPath: srcPath, lay: lay, dst: dst, strict: strict, copied: map[string]bool{}, nums: map[uint32]string{}}
}

// problem records what could not be read; in strict mode it is an error.
func (c *copier) problem(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.strict {
		return errors.New(msg)
	}
	c.rep.skipped = append(c.rep.skipped, msg)
	return nil
}

// view reads the source under guard.
func (c *copier) view(fn func(*bolt.Tx) error) error {
	return guard(c.srcPath, func() error { return c.src.View(fn) })
}

// write queues a write to the destination, flushing when enough is queued.
// Without a destination (Check reading an older file) it does nothing.
func (c *copier) write(size int, fn func(*Tx) error) error {
	if c.dst == nil {
		return nil
	}
	c.buf = append(c.buf, fn)
	c.bufSize += size
	if c.bufSize >= flushAt {
		return c.flush()
	}
	return nil
}

// flush writes what is queued in one destination transaction.
func (c *copier) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	buf := c.buf
	c.buf, c.bufSize = nil, 0
	return c.dst.update(func(tx *Tx) error {
		for _, fn := range buf {
			if err := fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
}

// reason is what went wrong reading the source, for a line of the
// report: a damaged file's detail without the advice on checking it.
func reason(err error) string {
	var d *DamagedError
	if errors.As(err, &d) {
		return d.Detail
	}
	return err.Error()
}

// sessionEntry is a session record as read from the source.
type sessionEntry struct {
	info  model.Session
	place place
	ok    bool  // place is good
	err   error // the record could not be decoded
}

// copyAll copies every session, then the source mappings.
func (c *copier) copyAll() error {
	var entries []sessionEntry
	var lastID []byte
	err := c.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bktSessions)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			lastID = bytes.Clone(k)
			s, p, ok, err := c.lay.session(string(k), v)
			entries = append(entries, sessionEntry{info: s, place: p, ok: ok, err: err})
			return nil
		})
	})
	if err != nil {
		if err := c.problem("the list of sessions cannot be read past %q: %s", lastID, reason(err)); err != nil {
			return err
		}
	}
	for _, e := range entries {
		id := e.place.id
		if e.err != nil {
			if !e.ok {
				if err := c.problem("session %q: its record cannot be read (%v), nor where its messages are: skipped", id, e.err); err != nil {
					return err
				}
				continue
			}
			if err := c.problem("session %q: its record cannot be read (%v): its messages are copied under a new record", id, e.err); err != nil {
				return err
			}
			e.info = model.Session{ID: id, Title: "salvaged session " + id}
		}
		c.nums[e.place.num] = id
		if err := c.copySession(e.place, e.info, e.err == nil); err != nil {
			return err
		}
	}
	if c.lay.numbered() {
		if err := c.copyOrphans(); err != nil {
			return err
		}
	}
	if err := c.copySources(); err != nil {
		return err
	}
	if err := c.copySettings(); err != nil {
		return err
	}
	return c.flush()
}

// copySettings copies the file's settings (the memory policies new
// sessions get).
func (c *copier) copySettings() error {
	type entry struct {
		name  string
		value []byte
	}
	var all []entry
	err := c.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bktMeta)
		if b == nil {
			return nil
		}
		cur := b.Cursor()
		prefix := []byte(settingPrefix)
		for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
			all = append(all, entry{string(k[len(prefix):]), bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		if err := c.problem("the file's settings cannot be read: %s", reason(err)); err != nil {
			return err
		}
	}
	for _, e := range all {
		if err := c.write(len(e.name)+len(e.value), func(tx *Tx) error { return tx.PutSetting(e.name, e.value) }); err != nil {
			return err
		}
	}
	return nil
}

// copyOrphans copies the messages of session numbers no readable record
// names, under new records ("salvaged-N").
func (c *copier) copyOrphans() error {
	next := uint32(1)
	for {
		var num uint32
		found := false
		err := c.view(func(tx *bolt.Tx) error {
			b := tx.Bucket(bktMsgs)
			if b == nil {
				return nil
			}
			cur := b.Cursor()
			for {
				k, _ := cur.Seek(key(next))
				if len(k) < numLen {
					return nil
				}
				num = binary.BigEndian.Uint32(k)
				if _, ok := c.nums[num]; !ok {
					found = true
					return nil
				}
				if num == math.MaxUint32 {
					return nil
				}
				next = num + 1
			}
		})
		if err != nil {
			return c.problem("the messages of sessions after number %d cannot be looked through: %s", next, reason(err))
		}
		if !found {
			return nil
		}
		id := fmt.Sprintf("salvaged-%d", num)
		if err := c.problem("messages of session number %d have no session record: copied as session %q", num, id); err != nil {
			return err
		}
		c.nums[num] = id
		if err := c.copySession(place{id: id, num: num}, model.Session{ID: id, Title: "salvaged session " + id}, false); err != nil {
			return err
		}
		if num == math.MaxUint32 {
			return nil
		}
		next = num + 1
	}
}

// copySession copies one session: its messages (a placeholder for each
// one lost before the last readable one, so seqs and the operations'
// targets keep their meaning), operations, import keys and preferences,
// then its record with counts that match what was copied. known says the
// record was read; otherwise times and counts come from the messages.
func (c *copier) copySession(p place, info model.Session, known bool) error {
	if c.copied[info.ID] {
		return c.problem("session %q appears twice: copied once", info.ID)
	}
	c.copied[info.ID] = true
	record := info
	if err := c.write(64, func(tx *Tx) error { return tx.PutSession(record) }); err != nil {
		return err
	}
	mc := msgCopier{c: c, p: p, id: info.ID, limit: uint64(max(info.MessageCount, 0))}
	if err := mc.run(); err != nil {
		return err
	}
	if known && c.strict && mc.copied != mc.limit {
		return fmt.Errorf("session %q has %d messages, not %d", info.ID, mc.copied, mc.limit)
	}
	ops, err := c.readOps(p, info.ID)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if err := c.write(256, func(tx *Tx) error { return tx.PutOp(info.ID, op) }); err != nil {
			return err
		}
	}
	if err := c.copyKeys(p, info.ID, mc.copied); err != nil {
		return err
	}
	var prefs []byte
	if err := c.view(func(tx *bolt.Tx) error { prefs = bytes.Clone(c.lay.prefs(tx, p)); return nil }); err != nil {
		if err := c.problem("session %q: pending preferences cannot be read: %s", info.ID, reason(err)); err != nil {
			return err
		}
	}
	if len(prefs) > 0 {
		if err := c.write(len(prefs), func(tx *Tx) error { return tx.PutPrefs(info.ID, prefs) }); err != nil {
			return err
		}
	}
	if !c.strict {
		info.MessageCount, info.Tokens, info.OpCount = int(mc.copied), mc.tokens, len(ops)
		if !known {
			info.CreatedAt, info.UpdatedAt = mc.first, mc.latest
		}
		if err := c.write(64, func(tx *Tx) error { return tx.PutSession(info) }); err != nil {
			return err
		}
	}
	c.rep.sessions++
	c.rep.ops += len(ops)
	return nil
}

// readOps reads a session's operations, in creation order.
func (c *copier) readOps(p place, id string) ([]model.Op, error) {
	var ops []model.Op
	var problems []string
	err := c.view(func(tx *bolt.Tx) error {
		b, prefix := c.lay.records(tx, p, bktOps)
		if b == nil {
			return nil
		}
		cur := b.Cursor()
		for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
			var op model.Op
			if err := json.Unmarshal(v, &op); err != nil || op.ID == "" {
				if err == nil {
					err = errors.New("no op ID")
				}
				problems = append(problems, fmt.Sprintf("session %q: op #%x cannot be read (%v): skipped", id, k[len(prefix):], err))
				continue
			}
			ops = append(ops, op)
		}
		return nil
	})
	if err != nil {
		problems = append(problems, fmt.Sprintf("session %q: operations after the %d read cannot be read (%s): skipped", id, len(ops), reason(err)))
	}
	for _, p := range problems {
		if err := c.problem("%s", p); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// copyKeys copies a session's import keys that point at copied messages.
func (c *copier) copyKeys(p place, id string, messages uint64) error {
	type entry struct {
		key string
		seq uint64
	}
	var keys []entry
	bad := 0
	err := c.view(func(tx *bolt.Tx) error {
		b, prefix := c.lay.records(tx, p, bktKeys)
		if b == nil {
			return nil
		}
		cur := b.Cursor()
		for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
			seq, ok := c.lay.importSeq(v)
			if !ok || seq > messages || len(k) == len(prefix) {
				bad++
				continue
			}
			keys = append(keys, entry{string(k[len(prefix):]), seq})
		}
		return nil
	})
	if err != nil {
		if err := c.problem("session %q: import keys after the %d read cannot be read: %s", id, len(keys), reason(err)); err != nil {
			return err
		}
	}
	if bad > 0 {
		if err := c.problem("session %q: %d import keys are unreadable or point past the copied messages: skipped", id, bad); err != nil {
			return err
		}
	}
	for _, e := range keys {
		if err := c.write(len(e.key)+16, func(tx *Tx) error { return tx.PutImportKey(id, e.key, e.seq) }); err != nil {
			return err
		}
	}
	c.rep.keys += len(keys)
	return nil
}

// copySources copies the source mappings of the sessions copied.
func (c *copier) copySources() error {
	type entry struct{ src, id string }
	var all []entry
	err := c.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bktSources)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			all = append(all, entry{string(k), string(v)})
			return nil
		})
	})
	if err != nil {
		if err := c.problem("source mappings after the %d read cannot be read: %s", len(all), reason(err)); err != nil {
			return err
		}
	}
	dropped := 0
	for _, e := range all {
		// A migration keeps every mapping as it was; salvage drops those
		// to sessions it did not copy.
		if e.src == "" || !c.strict && !c.copied[e.id] {
			dropped++
			continue
		}
		if err := c.write(len(e.src)+len(e.id), func(tx *Tx) error { return tx.PutSourceSession(e.src, e.id) }); err != nil {
			return err
		}
		c.rep.sources++
	}
	if dropped > 0 {
		return c.problem("%d source mappings name sessions that were not copied: skipped", dropped)
	}
	return nil
}
