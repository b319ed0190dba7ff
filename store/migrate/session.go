package migrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"weft/model"
	"weft/store"
)

// state is what a store holds of one session besides its messages, read
// in one transaction.
type state struct {
	rec     model.Session
	last    uint64 // the last message's seq
	ops     []model.Op
	keys    map[string]uint64
	sources []string
	prefs   []byte
}

// readState reads session id's state; found is false when tx has no
// such session.
func readState(tx store.Tx, id string) (st state, found bool, err error) {
	st.rec, err = tx.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if st.last, err = tx.LastSeq(id); err != nil {
		return st, true, err
	}
	if st.ops, err = tx.Ops(id); err != nil {
		return st, true, err
	}
	st.keys = map[string]uint64{}
	if err := tx.EachImportKey(id, func(k string, seq uint64) error {
		st.keys[k] = seq
		return nil
	}); err != nil {
		return st, true, err
	}
	if st.sources, err = tx.SessionSources(id); err != nil {
		return st, true, err
	}
	// In one order whatever the backend's collation.
	slices.Sort(st.sources)
	p, err := tx.Prefs(id)
	st.prefs = slices.Clone(p)
	return st, true, err
}

// states reads session id in the source (which must have it) and in the
// destination.
func states(from, to store.Store, id string) (src, dst state, found bool, err error) {
	if err = from.View(func(tx store.Tx) error {
		var ok bool
		src, ok, err = readState(tx, id)
		if err == nil && !ok {
			err = fmt.Errorf("%s: session %s went while it was copied: %w", from.Path(), id, store.ErrNotFound)
		}
		return err
	}); err != nil {
		return
	}
	err = to.View(func(tx store.Tx) error {
		var err error
		dst, found, err = readState(tx, id)
		return err
	})
	return
}

// earlier says why dst is not an earlier state of src ("" when it is):
// the same session (created at the same time), at the source's version
// or before it, with no more messages, its operations the first of the
// source's in the same order, its import keys and sources the source's.
// At the same version, what it holds must be the source's too.
func earlier(src, dst state) string {
	switch {
	case !dst.rec.CreatedAt.Equal(src.rec.CreatedAt):
		return fmt.Sprintf("another session with this ID is there (created %s; the source's %s)", dst.rec.CreatedAt.UTC().Format(timeFormat), src.rec.CreatedAt.UTC().Format(timeFormat))
	case dst.rec.Version > src.rec.Version:
		return fmt.Sprintf("it is at version %d there, the source's at %d: it was changed in the destination", dst.rec.Version, src.rec.Version)
	case dst.last > src.last:
		return fmt.Sprintf("it has %d messages there, the source %d", dst.last, src.last)
	case len(dst.ops) > len(src.ops):
		return fmt.Sprintf("it has %d operations there, the source %d", len(dst.ops), len(src.ops))
	}
	same := dst.rec.Version == src.rec.Version
	for i := range dst.ops {
		if dst.ops[i].ID != src.ops[i].ID {
			return fmt.Sprintf("operation %d is %s there, %s in the source", i+1, dst.ops[i].ID, src.ops[i].ID)
		}
		if same && !sameOp(dst.ops[i], src.ops[i]) {
			return fmt.Sprintf("operation %s differs at the same version (%d)", dst.ops[i].ID, src.rec.Version)
		}
	}
	for k, seq := range dst.keys {
		if s, ok := src.keys[k]; !ok || s != seq {
			return fmt.Sprintf("import key %q is not the source's", k)
		}
	}
	for _, s := range dst.sources {
		if !slices.Contains(src.sources, s) {
			return fmt.Sprintf("source %q is not the source's", s)
		}
	}
	if same && !sameSession(dst.rec, src.rec) {
		return fmt.Sprintf("its record differs at the same version (%d)", src.rec.Version)
	}
	return ""
}

// whole reports whether dst holds all of src but its messages' content
// (which Verify reads).
func whole(src, dst state) bool {
	return dst.last == src.last && sameSession(dst.rec, src.rec) &&
		len(dst.ops) == len(src.ops) && slices.EqualFunc(dst.ops, src.ops, sameOp) &&
		maps.Equal(dst.keys, src.keys) && slices.Equal(dst.sources, src.sources) &&
		string(dst.prefs) == string(src.prefs)
}

const timeFormat = "2006-01-02 15:04:05.999999999Z"

// copier copies one session at a time.
type copier struct {
	from, to store.Store
	opt      Options
	n, of    int // the session's place, for Copying reports
}

// session copies session id: its record first (so the session is there
// for its messages), its messages in bounded transactions, its missing
// import keys likewise, then its operations, sources, preferences and
// record in one last transaction, so a destination whose record is the
// source's and whose other records are all there has it whole.
func (c *copier) session(ctx context.Context, id string) (Progress, error) {
	src, dst, found, err := states(c.from, c.to, id)
	p := Progress{Session: id, Title: src.rec.Title, Action: Copied}
	if err != nil {
		return p, err
	}
	if found {
		if why := earlier(src, dst); why != "" {
			return p, fmt.Errorf("%s: %w: session %s: %s", c.to.Path(), ErrDiffers, id, why)
		}
		if err := c.sameBoundary(id, dst.last); err != nil {
			return p, err
		}
		if whole(src, dst) {
			p.Action = Skipped
			return p, nil
		}
		p.Action, p.From = Updated, dst.last
		if dst.last < src.last {
			p.Action = Resumed
		}
	} else {
		if err := update(c.to, func(tx store.Tx) error { return tx.PutSession(src.rec) }); err != nil {
			return p, storeErr(c.to, id, "", err)
		}
	}
	if p.Messages, err = c.messages(ctx, id, dst.last, src.last); err != nil {
		return p, err
	}
	if err := c.keys(ctx, id, src.keys, dst.keys); err != nil {
		return p, err
	}
	err = update(c.to, func(tx store.Tx) error {
		p.Ops = 0
		for i := range src.ops {
			if i < len(dst.ops) && sameOp(src.ops[i], dst.ops[i]) {
				continue
			}
			if err := tx.PutOp(id, src.ops[i]); err != nil {
				return err
			}
			p.Ops++
		}
		for _, s := range src.sources {
			switch have, ok := tx.SourceSession(s); {
			case ok && have != id:
				return fmt.Errorf("%w: source %q leads to session %s there", ErrDiffers, s, have)
			case !ok:
				if err := tx.PutSourceSession(s, id); err != nil {
					return err
				}
			}
		}
		if err := tx.PutPrefs(id, src.prefs); err != nil {
			return err
		}
		return tx.PutSession(src.rec)
	})
	if err != nil {
		return p, storeErr(c.to, id, "", err)
	}
	return p, nil
}

// sameBoundary checks that the destination's last message of a session
// (seq last) is the source's, before more are appended after it.
func (c *copier) sameBoundary(id string, last uint64) error {
	if last == 0 {
		return nil
	}
	var a, b model.Message
	err := c.from.View(func(tx store.Tx) (err error) { a, err = tx.Message(id, last); return err })
	if err == nil {
		err = c.to.View(func(tx store.Tx) (err error) { b, err = tx.Message(id, last); return err })
	}
	if err != nil {
		return err
	}
	if what := messageDiff(a, b); what != "" {
		return fmt.Errorf("%s: %w: session %s: message %d differs from the source's (%s)", c.to.Path(), ErrDiffers, id, last, what)
	}
	return nil
}

// messages appends the source's messages after seq have up to last, in
// transactions of at most a batch each, and says how many it wrote.
func (c *copier) messages(ctx context.Context, id string, have, last uint64) (int, error) {
	n, size := c.opt.batch()
	wrote := 0
	for next := have + 1; next <= last; {
		if err := ctx.Err(); err != nil {
			return wrote, err
		}
		batch, err := readBatch(c.from, id, next, last, n, size)
		if err != nil {
			return wrote, err
		}
		if len(batch) == 0 {
			return wrote, fmt.Errorf("%s: session %s: message %d is not there though %d is the last", c.from.Path(), id, next, last)
		}
		if err := update(c.to, func(tx store.Tx) error { return tx.AppendMessages(id, batch) }); err != nil {
			return wrote, storeErr(c.to, id, fmt.Sprintf("messages %d-%d", next, batch[len(batch)-1].Seq), err)
		}
		wrote += len(batch)
		next += uint64(len(batch))
		if c.opt.Report != nil && next <= last {
			c.opt.Report(Progress{N: c.n, Of: c.of, Session: id, Action: Copying, Messages: int(next - 1), Last: last})
		}
	}
	return wrote, nil
}

// errFull stops a read when its batch is full.
var errFull = errors.New("batch full")

// readBatch reads session id's messages from seq from up to to, as many
// as fit in a batch (one at least).
func readBatch(s store.Store, id string, from, to uint64, most, bytes int) ([]model.Message, error) {
	var out []model.Message
	size := 0
	// Ask for no more than the batch: a backend that streams rows
	// (PostgreSQL) would otherwise read the rest of the session to end
	// the query.
	to = min(to, from+uint64(most)-1)
	err := s.View(func(tx store.Tx) error {
		out, size = out[:0], 0
		return tx.Messages(id, from, to, func(m model.Message) error {
			m.Parts = slices.Clone(m.Parts)
			out = append(out, m)
			size += len(m.Content) + len(m.Parts)
			if len(out) >= most || size >= bytes {
				return errFull
			}
			return nil
		})
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	if err != nil {
		return nil, storeErr(s, id, fmt.Sprintf("messages from %d", from), err)
	}
	return out, nil
}

// keys puts the import keys the destination lacks, a batch per
// transaction.
func (c *copier) keys(ctx context.Context, id string, src, dst map[string]uint64) error {
	var missing []string
	for _, k := range sortedKeys(src) {
		if _, ok := dst[k]; !ok {
			missing = append(missing, k)
		}
	}
	n, _ := c.opt.batch()
	for chunk := range slices.Chunk(missing, n) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := update(c.to, func(tx store.Tx) error {
			for _, k := range chunk {
				if err := tx.PutImportKey(id, k, src[k]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return storeErr(c.to, id, "import keys", err)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// storeErr is err about what of session id in s, named with s unless
// err names it already (PostgreSQL's errors do).
func storeErr(s store.Store, id, what string, err error) error {
	prefix := "session " + id + ": "
	if what != "" {
		prefix += what + ": "
	}
	if !strings.Contains(err.Error(), s.Path()) {
		prefix = s.Path() + ": " + prefix
	}
	return fmt.Errorf("%s%w", prefix, err)
}
