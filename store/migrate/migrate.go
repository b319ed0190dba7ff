// Package migrate copies every session from one store to another (a
// bbolt file, a PostgreSQL database, either way round) and verifies the
// copy: each session's record, messages, operations, import keys,
// sources and pending preferences, and the store's settings.
//
// A copy that was interrupted is run again: a session the destination
// holds whole is skipped, one it holds in part is resumed after its last
// message (messages are append-only and immutable), and its operations,
// keys and record are put again, which changes nothing that is already
// there. A destination session that holds more than the source, or
// something else, is never overwritten: the copy stops with an error
// wrapping ErrDiffers before it writes anything.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"weft/model"
	"weft/store"
)

// The errors Copy and Verify give (wrapped, with what they are about).
var (
	// ErrDiffers: the destination already holds a session (or a
	// setting) that is not an earlier state of the source's.
	ErrDiffers = errors.New("the destination holds other data")
	// ErrMismatch: the copy, read back, is not what the source holds.
	ErrMismatch = errors.New("the copy differs from the source")
)

// Defaults of Options.
const (
	DefaultBatch      = 2000
	DefaultBatchBytes = 32 << 20
)

// Threader makes a session's effective thread, the IDs of its items in
// order, from its messages' heads, its operations and its active tags.
// The store knows nothing of what operations mean; the caller that does
// (the command line, with ops/thread) passes it in.
type Threader func(heads []model.Head, ops []model.Op, activeTags []string) []model.ItemID

// Options configure Copy.
type Options struct {
	// Batch and BatchBytes bound one transaction of messages: at most
	// Batch messages (0: DefaultBatch) of at most BatchBytes of content
	// and parts (0: DefaultBatchBytes; a larger message goes alone).
	Batch, BatchBytes int
	// Report, when not nil, hears of each session as it is done.
	Report func(Progress)
	// Thread, when not nil, is used by the verification to compare each
	// session's effective thread on both sides.
	Thread Threader
}

func (o Options) batch() (n, bytes int) {
	n, bytes = o.Batch, o.BatchBytes
	if n <= 0 {
		n = DefaultBatch
	}
	if bytes <= 0 {
		bytes = DefaultBatchBytes
	}
	return n, bytes
}

// Action is what Copy did with a session.
type Action string

const (
	Copied   Action = "copied"   // it was not in the destination
	Resumed  Action = "resumed"  // the destination held its first messages
	Updated  Action = "updated"  // the destination held an earlier version of it
	Skipped  Action = "skipped"  // the destination held it whole
	Verified Action = "verified" // read back and found equal
	// Copying is a session under way: Messages of Last are in the
	// destination, reported after each batch of a session that takes
	// more than one.
	Copying Action = "copying"
)

// Progress is one session done.
type Progress struct {
	N, Of   int // the session's place (1-based) and how many there are
	Session string
	Title   string
	Action  Action
	// From is the seq the copy of messages began after (Resumed).
	From uint64
	// Messages and Ops are what this run wrote of the session.
	Messages, Ops int
	// Last is the session's last message's seq (Copying).
	Last uint64
}

// Result is what Copy did.
type Result struct {
	Sessions                          int // in the source
	Copied, Resumed, Updated, Skipped int
	// Messages and Ops are what this run wrote; Settings the settings
	// it put.
	Messages, Ops, Settings int
	// Verified is the sessions read back and found equal.
	Verified int
	Elapsed  time.Duration
}

// Copy copies every session and setting of from into to, then verifies
// the copy (Verify). Nothing is written to from.
func Copy(ctx context.Context, from, to store.Store, opt Options) (Result, error) {
	start := time.Now()
	var res Result
	list, err := sessionIDs(from)
	if err != nil {
		return res, err
	}
	res.Sessions = len(list)
	// Look before writing: a destination that holds other data is
	// refused whole.
	if err := preflight(ctx, from, to, list); err != nil {
		return res, err
	}
	n, err := copySettings(from, to)
	res.Settings = n
	if err != nil {
		return res, err
	}
	c := copier{from: from, to: to, opt: opt}
	for i, id := range list {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		c.n, c.of = i+1, len(list)
		p, err := c.session(ctx, id)
		if err != nil {
			return res, err
		}
		p.N, p.Of = i+1, len(list)
		switch p.Action {
		case Copied:
			res.Copied++
		case Resumed:
			res.Resumed++
		case Updated:
			res.Updated++
		case Skipped:
			res.Skipped++
		}
		res.Messages += p.Messages
		res.Ops += p.Ops
		if opt.Report != nil {
			opt.Report(p)
		}
	}
	res.Verified, err = Verify(ctx, from, to, opt)
	res.Elapsed = time.Since(start)
	return res, err
}

// sessionIDs are the source's sessions, oldest first (a fork's origin
// before the fork). A record that cannot be read stops the copy: weft
// check and weft salvage deal with a damaged file first.
func sessionIDs(from store.Store) ([]string, error) {
	var all []model.Session
	var bad []error
	if err := from.View(func(tx store.Tx) error {
		all, bad = tx.AllSessions()
		return nil
	}); err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s: %d session record(s) cannot be read (first: %w); weft check and weft salvage copy what can be read into a sound file, to migrate from", from.Path(), len(bad), bad[0])
	}
	slices.SortFunc(all, func(a, b model.Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
	ids := make([]string, len(all))
	for i := range all {
		ids[i] = all[i].ID
	}
	return ids, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// preflight checks every session the destination already has against
// the source's, and collects every refusal.
func preflight(ctx context.Context, from, to store.Store, ids []string) error {
	var refused []string
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		src, dst, found, err := states(from, to, id)
		if err != nil {
			return err
		}
		why := ""
		if found {
			why = earlier(src, dst)
		}
		if why == "" {
			if why, err = elsewhere(to, id, src); err != nil {
				return err
			}
		}
		if why != "" {
			refused = append(refused, fmt.Sprintf("session %s: %s", id, why))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w, which migrate does not overwrite:\n  %s", to.Path(), ErrDiffers, joinCapped(refused, 10))
}

// elsewhere says which of session id's operations or sources the
// destination holds in another session ("" for none): operation IDs and
// sources are unique in a store.
func elsewhere(to store.Store, id string, src state) (string, error) {
	why := ""
	err := to.View(func(tx store.Tx) error {
		for _, op := range src.ops {
			sid, err := tx.OpSession(op.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			case sid != id:
				why = fmt.Sprintf("its operation %s is session %s's there", op.ID, sid)
				return nil
			}
		}
		for _, s := range src.sources {
			if sid, ok := tx.SourceSession(s); ok && sid != id {
				why = fmt.Sprintf("its source %q leads to session %s there", s, sid)
				return nil
			}
		}
		return nil
	})
	return why, err
}

// copySettings puts the source's settings the destination lacks; one
// it holds with another value is refused.
func copySettings(from, to store.Store) (int, error) {
	src := map[string][]byte{}
	if err := from.View(func(tx store.Tx) error {
		return tx.Settings(func(name string, value []byte) error {
			src[name] = slices.Clone(value)
			return nil
		})
	}); err != nil {
		return 0, err
	}
	put := 0
	err := update(to, func(tx store.Tx) error {
		put = 0
		for _, name := range sortedKeys(src) {
			have := tx.Setting(name)
			switch {
			case have == nil:
				if err := tx.PutSetting(name, src[name]); err != nil {
					return err
				}
				put++
			case !sameJSONBytes(have, src[name]):
				return fmt.Errorf("%s: %w: setting %q is %s there and %s in %s", to.Path(), ErrDiffers, name, have, src[name], from.Path())
			}
		}
		return nil
	})
	return put, err
}

// update runs fn in a write transaction of s, again when another
// process's write conflicted with it (store.ErrConflict: nothing was
// written).
func update(s store.Store, fn func(store.Tx) error) error {
	var err error
	for range 5 {
		if err = s.Update(fn); !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return err
}

func joinCapped(lines []string, most int) string {
	out := lines
	if len(lines) > most {
		out = append(slices.Clone(lines[:most]), fmt.Sprintf("and %d more", len(lines)-most))
	}
	s := ""
	for i, l := range out {
		if i > 0 {
			s += "\n  "
		}
		s += l
	}
	return s
}
