package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/boltfile"
	"weft/store/record"
)

// Finding is one thing Check found wrong with a file.
type Finding struct {
	Session string `json:"session,omitempty"` // the session it concerns, "" for the file as a whole
	Record  string `json:"record,omitempty"`  // the record, e.g. "message 12", "op #3", "page 7"
	Problem string `json:"problem"`
}

// String says it on one line: session "x": message 12: what is wrong.
func (f Finding) String() string {
	s := ""
	if f.Session != "" {
		s = fmt.Sprintf("session %q: ", f.Session)
	}
	if f.Record != "" {
		s += f.Record + ": "
	}
	return s + f.Problem
}

// maxPerSession bounds the findings about the records of one session
// (and about pages); the rest are counted in one more.
const maxPerSession = 20

// Check verifies the database at path without writing to it, and returns
// what it found wrong, nothing when the file is sound. It looks at the
// header pages and the freelist, walks every page reachable from the root
// (in range, referenced once, of the right type, elements inside their
// page), runs bbolt's own page checks when the walk says they are safe
// to run, then checks weft's invariants: the schema and buckets, every
// session record decodes, every message decodes and their seqs run 1..the
// record's message count, the heads chunks and time index match the
// messages, every operation decodes and its opindex entry points back
// (and every opindex entry to an operation), the record's operation count
// matches, import keys point at stored seqs, no records belong to no
// session, and source mappings name sessions. In a file with damaged
// pages those are checked over a copy in which the pages are cut off:
// the walk's findings name the pages and their bucket, the rest the
// records they held, as missing. Nothing a damaged file does makes it
// panic or go round a cycle of pages. An error means the file could not
// be looked at at all (it does not exist, or cannot be read).
func Check(path string) ([]Finding, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a database file", path)
	}
	if fi.Size() == 0 {
		return nil, nil // never written to: an empty database
	}
	// bbolt's shared lock first, so no weft writes the file while its
	// pages are read here; a file bbolt cannot open at all is looked at
	// as it is (nothing can be writing it either).
	db, schema, openErr := openDamaged(path)
	var d *DamagedError
	if openErr != nil && !errors.As(openErr, &d) {
		return nil, openErr
	}
	if db != nil {
		defer func() { _ = db.Close() }()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	c := &checker{path: path}
	rep := boltfile.Inspect(f, fi.Size())
	for _, n := range rep.Notes {
		c.file("", n)
	}
	if rep.Fatal != "" {
		c.file("", rep.Fatal)
	}
	if rep.WriteFatal != "" {
		c.file("freelist", rep.WriteFatal)
	}
	if rep.PageSize == 0 {
		return c.out, nil // no header page to start from
	}
	w := boltfile.WalkTree(f, rep)
	for _, p := range w.Problems {
		c.file("", p)
	}
	if db == nil {
		if rep.Fatal == "" {
			c.file("", d.Detail)
		}
		return c.out, nil
	}
	if rep.Fatal == "" && rep.WriteFatal == "" && len(w.Problems) == 0 {
		// bbolt checks in a goroutine of its own, where a fault would
		// end the process: only a file whose pages all lie inside it and
		// form a tree gets there.
		err := guard(path, func() error {
			return db.View(func(tx *bolt.Tx) error {
				n := 0
				for err := range tx.Check() {
					if n++; n <= maxPerSession {
						c.file("", "bbolt: "+err.Error())
					}
				}
				if n > maxPerSession {
					c.file("", fmt.Sprintf("bbolt: and %d more", n-maxPerSession))
				}
				return nil
			})
		})
		if err != nil {
			c.file("", err.Error())
		}
	}
	if w.Cut() {
		// bbolt would follow the damaged pages' numbers round and round:
		// the records are read from a copy in which they are cut off,
		// so what they held shows as missing.
		copied, done, err := openCopy(path, f, rep, w, "")
		if err != nil {
			c.file("", err.Error())
			return c.out, nil
		}
		defer done()
		db = copied
		if schema = fileSchema(db, path); schema > currentSchema {
			c.file("meta", tooNew(path, schema).Error())
			return c.out, nil
		}
	}
	if !sameLayout(schema) {
		// An older file: every record it has is read, as its migration
		// will.
		cp := newCopier(db, path, layout1{}, nil, false)
		if err := cp.copyAll(); err != nil {
			c.file("", err.Error())
		}
		for _, s := range cp.rep.skipped {
			c.file("", s)
		}
		return c.out, nil
	}
	c.weft(db)
	return c.out, nil
}

// checker gathers findings.
type checker struct {
	path string
	out  []Finding
	// per counts findings per session, to bound them.
	per map[string]int
}

func (c *checker) file(record, problem string) {
	c.out = append(c.out, Finding{Record: record, Problem: problem})
}

// add records a finding about a session, at most maxPerSession of them.
func (c *checker) add(session, record, format string, args ...any) {
	if c.per == nil {
		c.per = map[string]int{}
	}
	c.per[session]++
	switch n := c.per[session]; {
	case n <= maxPerSession:
		c.out = append(c.out, Finding{Session: session, Record: record, Problem: fmt.Sprintf(format, args...)})
	case n == maxPerSession+1:
		c.out = append(c.out, Finding{Session: session, Problem: "more problems: only the first are listed"})
	}
}

// view reads under guard; a panic becomes a finding about session.
func (c *checker) view(db *bolt.DB, session string, fn func(*bolt.Tx) error) {
	err := guard(c.path, func() error { return db.View(fn) })
	var d *DamagedError
	if errors.As(err, &d) {
		c.add(session, "", "%s", d.Detail)
	} else if err != nil {
		c.add(session, "", "%v", err)
	}
}

// weft checks weft's invariants over a current-schema file.
func (c *checker) weft(db *bolt.DB) {
	type entry struct {
		info model.Session
		num  uint32
	}
	var sessions []entry
	nums := map[uint32]string{}
	c.view(db, "", func(tx *bolt.Tx) error {
		schema, _, err := readSchema(tx, c.path)
		if err != nil {
			c.file("meta", err.Error())
		}
		if err := checkBuckets(tx, c.path, schema); err != nil {
			var d *DamagedError
			if errors.As(err, &d) {
				c.file("", d.Detail)
			}
		}
		b := tx.Bucket(bktSessions)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			id := string(k)
			s, num, err := record.Decode(id, v)
			if err != nil {
				c.add(id, "session record", "corrupt: %v", err)
				if n, err := record.Num(v); err == nil {
					nums[n] = id
				}
				return nil
			}
			if other, ok := nums[num]; ok {
				c.add(id, "session record", "number %d is session %q's too", num, other)
			}
			nums[num] = id
			sessions = append(sessions, entry{s, num})
			return nil
		})
	})
	for _, e := range sessions {
		c.view(db, e.info.ID, func(tx *bolt.Tx) error {
			c.session(tx, e.info, e.num)
			return nil
		})
	}
	c.view(db, "", func(tx *bolt.Tx) error {
		c.opIndex(tx, nums)
		for _, name := range [][]byte{bktMsgs, bktByTime, bktHeads, bktOps, bktKeys, bktPrefs, bktBig} {
			c.orphans(tx.Bucket(name), name, nums)
		}
		ids := map[string]bool{}
		for _, id := range nums {
			ids[id] = true
		}
		if b := tx.Bucket(bktSources); b != nil {
			_ = b.ForEach(func(k, v []byte) error {
				if !ids[string(v)] {
					c.add("", fmt.Sprintf("source %q", k), "names session %q, which is not in the file", v)
				}
				return nil
			})
		}
		return nil
	})
}

// session checks one session's records against its record.
func (c *checker) session(tx *bolt.Tx, info model.Session, num uint32) {
	id := info.ID
	// Messages: seqs 1..n, each decodes; their heads for what follows.
	// (The scans here note what they find and never fail.)
	var heads []model.Head
	_ = scan(tx.Bucket(bktMsgs), num, nil, func(k, v []byte) (bool, error) {
		if len(k) != 8 {
			c.add(id, "message key", "%x is not 8 bytes", k)
			return true, nil
		}
		seq := be64(k)
		if want := uint64(len(heads)) + 1; seq != want {
			c.add(id, fmt.Sprintf("message %d", want), "missing (the next stored is %d)", seq)
			return false, nil
		}
		full, err := whole(tx, num, seq, v)
		if err == nil {
			_, err = record.DecodeMessage(full, seq)
		}
		if err != nil {
			c.add(id, fmt.Sprintf("message %d", seq), "corrupt: %v", err)
		}
		h, _ := record.HeadOf(v)
		heads = append(heads, h)
		return true, nil
	})
	n := uint64(len(heads))
	if int(n) != info.MessageCount {
		c.add(id, "session record", "says %d messages, but %d are stored", info.MessageCount, n)
	}
	// Heads: one chunk per complete 1024, equal to the messages'.
	full := n / headsPerChunk
	var chunk uint64
	_ = scan(tx.Bucket(bktHeads), num, nil, func(k, v []byte) (bool, error) {
		switch {
		case len(k) != 8 || be64(k) != chunk:
			c.add(id, "heads index", "chunk key %x where chunk %d belongs", k, chunk)
			return false, nil
		case chunk >= full:
			c.add(id, fmt.Sprintf("heads chunk %d", chunk), "%d messages fill only %d chunks", n, full)
			return false, nil
		case len(v) != chunkLen:
			c.add(id, fmt.Sprintf("heads chunk %d", chunk), "%d bytes, not %d", len(v), chunkLen)
		default:
			for i := range headsPerChunk {
				if record.GetHead(v[i*record.HeadLen:]) != heads[chunk*headsPerChunk+uint64(i)] {
					c.add(id, fmt.Sprintf("heads chunk %d", chunk), "the head of message %d does not match the message", chunk*headsPerChunk+uint64(i)+1)
					break
				}
			}
		}
		chunk++
		return true, nil
	})
	if chunk < full {
		c.add(id, "heads index", "%d chunks for %d messages, not %d", chunk, n, full)
	}
	// The time index: every message once, at its time; none for a
	// session in time order.
	seen := 0
	var stray tally
	_ = scan(tx.Bucket(bktByTime), num, nil, func(k, _ []byte) (bool, error) {
		at, seq, ok := parseTimeKey(k)
		if !ok || seq == 0 || seq > n || heads[seq-1].At != at {
			stray.add(fmt.Sprintf("%x", k))
		}
		seen++
		return true, nil
	})
	if stray.n > 0 {
		c.add(id, "time index", "%s name no stored message at its time (the first: %s)", plural(stray.n, "entry", "entries"), stray.first)
	}
	if seen == 0 {
		if n >= headsPerChunk {
			c.add(id, "time index", "missing for %d messages", n)
		}
		for i := 1; i < len(heads); i++ {
			if heads[i].At < heads[i-1].At {
				c.add(id, "time index", "missing, and message %d is older than message %d", i+1, i)
				break
			}
		}
	} else if uint64(seen) != n {
		c.add(id, "time index", "%d entries for %d messages", seen, n)
	}
	// Operations: each decodes, and the index points back.
	idx := tx.Bucket(bktOpIndex)
	ops := 0
	_ = scan(tx.Bucket(bktOps), num, nil, func(k, v []byte) (bool, error) {
		ops++
		var op model.Op
		if err := json.Unmarshal(v, &op); err != nil || op.ID == "" {
			c.add(id, fmt.Sprintf("op #%x", k), "corrupt: %v", err)
			return true, nil
		}
		var iv []byte
		if idx != nil {
			iv = idx.Get([]byte(op.ID))
		}
		if sid, opKey, ok := parseOpIndex(iv); !ok || sid != id || !bytes.Equal(opKey, k) {
			c.add(id, fmt.Sprintf("op %s", op.ID), "its index entry %q does not point back to it", iv)
		}
		return true, nil
	})
	if ops != info.OpCount {
		c.add(id, "session record", "says %d operations, but %d are stored", info.OpCount, ops)
	}
	// Import keys point at stored messages.
	var past, bad tally
	_ = scan(tx.Bucket(bktKeys), num, nil, func(k, v []byte) (bool, error) {
		seq, ok := (layout2{}).importSeq(v)
		switch {
		case !ok:
			bad.add(fmt.Sprintf("%q (%x)", k, v))
		case seq > n:
			past.add(fmt.Sprintf("%q -> %d", k, seq))
		}
		return true, nil
	})
	if past.n > 0 {
		c.add(id, "import keys", "%s point past the %d stored messages (the first: %s)", plural(past.n, "key", "keys"), n, past.first)
	}
	if bad.n > 0 {
		c.add(id, "import keys", "%s hold no message number (the first: %s)", plural(bad.n, "key", "keys"), bad.first)
	}
}

// tally counts like problems and keeps the first.
type tally struct {
	n     int
	first string
}

func (t *tally) add(what string) {
	if t.n == 0 {
		t.first = what
	}
	t.n++
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// opIndex checks that every opindex entry names an operation stored.
func (c *checker) opIndex(tx *bolt.Tx, nums map[uint32]string) {
	idx, ops, sessions := tx.Bucket(bktOpIndex), tx.Bucket(bktOps), tx.Bucket(bktSessions)
	if idx == nil || ops == nil || sessions == nil {
		return
	}
	_ = idx.ForEach(func(k, v []byte) error {
		sid, opKey, ok := parseOpIndex(v)
		if !ok {
			c.add("", fmt.Sprintf("op index entry %q", k), "corrupt (%d bytes)", len(v))
			return nil
		}
		num, err := record.Num(sessions.Get([]byte(sid)))
		if err != nil {
			c.add(sid, fmt.Sprintf("op index entry %q", k), "names a session that is not in the file")
			return nil
		}
		if ops.Get(key(num, opKey)) == nil {
			c.add(sid, fmt.Sprintf("op index entry %q", k), "points at op #%x, which is not stored", opKey)
		}
		return nil
	})
}

// orphans reports records of session numbers no session has. It skips
// from one session's records to the next by seeking; keys out of order
// (a damaged page) could send a seek back to where it came from, so
// once one is met the rest are stepped through one by one.
func (c *checker) orphans(b *bolt.Bucket, name []byte, nums map[uint32]string) {
	if b == nil {
		return
	}
	cur := b.Cursor()
	k, _ := cur.First()
	var prev uint32
	ordered, started := true, false
	for k != nil {
		if len(k) < numLen {
			c.add("", string(name), "a key %x too short for a session number", k)
			k, _ = cur.Next()
			continue
		}
		num := binary.BigEndian.Uint32(k)
		switch {
		case started && num < prev:
			if ordered {
				c.add("", string(name), "key %x is out of order (after session number %d's)", k, prev)
			}
			ordered = false
		case !started || num > prev:
			if _, ok := nums[num]; !ok {
				c.add("", string(name), "records of session number %d, which no session has", num)
			}
		}
		started, prev = true, max(prev, num)
		if !ordered || num == ^uint32(0) {
			k, _ = cur.Next()
			continue
		}
		k, _ = cur.Seek(key(num + 1))
	}
}
