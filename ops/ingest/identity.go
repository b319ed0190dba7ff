package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"weft/formats"
	"weft/formats/weftjsonl"
	"weft/model"
	"weft/store"
)

// How an import recognises a session it has seen before, wherever the
// session has moved.
//
// A thread of a source file is known by its source key (format:key): the
// sources bucket maps it to the session it was imported into. A session
// exported in weft's JSONL is also known by its ID, and carries its
// sources and its messages' import keys, so that in the file it goes to:
//
//   - a session with its ID and creation time is the session itself: the
//     file's message m<n> is its message n (for the messages it had when
//     the import began; later ones by their recorded keys), so importing
//     an export into the file it came from adds only what is new;
//   - otherwise a session that an earlier import of this export went into
//     ("weft:<id>"), or that any of its sources went into, is the
//     session: messages are matched by any of their keys;
//   - otherwise a new session is made with the file's ID, unless a
//     session here already has that ID (a session made elsewhere that
//     only shares the ID, told apart by its creation time): then it gets
//     a new ID and the import notes it; "weft:<id>" leads to it from then
//     on.
//
// Whichever it is, the import records the keys and sources the session
// lacks here, so the session's first source (a Claude Code file)
// imported into this file afterwards finds it and adds nothing. The
// file's operations that the session has (by ID, or the same operation
// under another ID, as each file's import of a compaction makes its
// digest) are kept as they are here, toggled or reverted as they are.

// validSessionID reports whether a weft file's session ID can be kept as
// a session's ID here: 1 to 64 letters, digits, '-' or '_' (weft's own
// IDs are 16 base32 characters).
func validSessionID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// identify finds the session the thread was imported into before, if
// any, and the source keys to record as leading to it (see above). It
// runs for a thread imported without Options.Session.
func (th *importThread) identify(tx store.Tx) error {
	t := th.info
	if t.Source == formats.Weft && validSessionID(t.Key) {
		s, err := tx.Session(t.Key)
		switch {
		case err == nil && s.CreatedAt.Equal(t.CreatedAt):
			th.sid, th.self, th.native = s.ID, true, uint64(s.MessageCount)
			th.sources = slices.Clone(t.SourceKeys)
			return nil
		case err == nil:
			th.taken = s.ID
		case errors.Is(err, store.ErrNotFound):
			th.keepID = true
		default:
			return err
		}
	}
	candidates := append([]string{sourceKey(t)}, t.SourceKeys...)
	for i, src := range candidates {
		id, ok := tx.SourceSession(src)
		if !ok {
			continue
		}
		if _, err := tx.Session(id); err != nil {
			continue // a session deleted since, or unreadable: not this one
		}
		th.sid, th.keepID = id, false
		// Keys of a format whose keys are only unique within a thread
		// may have been stored bare, before they were qualified.
		th.legacy = i == 0 && !t.Source.GlobalKeys()
		break
	}
	if th.keepID {
		candidates = candidates[1:] // the session's ID leads to it
	}
	th.sources = candidates
	return nil
}

// selfCheck makes the thread's session the file's own when it is (weft's
// format, the same ID and creation time): for a thread imported into a
// session named by Options.Session.
func (th *importThread) selfCheck(tx store.Tx) error {
	if th.info.Source != formats.Weft || th.sid != th.info.Key {
		return nil
	}
	s, err := tx.Session(th.sid)
	if err != nil {
		return err
	}
	if s.CreatedAt.Equal(th.info.CreatedAt) {
		th.self, th.native = true, uint64(s.MessageCount)
	}
	return nil
}

// keyOf is the i-th key a message of the thread is stored under, for i
// up to len(m.Aliases): its own, qualified (see key), then the keys it
// brought from where it was exported.
func (th *importThread) keyOf(m *formats.Message, i int) string {
	if i == 0 {
		return th.key(m.Key)
	}
	return m.Aliases[i-1]
}

// ownSeq is the seq a key names in the file's own session: "<id>/m<n>",
// for a message it had when the import began.
func (th *importThread) ownSeq(k string) (uint64, bool) {
	if !th.self {
		return 0, false
	}
	rest, ok := strings.CutPrefix(k, th.sid+"/")
	if !ok {
		return 0, false
	}
	seq, ok := model.ItemID(rest).Seq()
	return seq, ok && seq <= th.native
}

// lookup finds the seq of a message of the thread imported before, by
// its key as the format gives it.
func (th *importThread) lookup(tx store.Tx, sid, k string) (uint64, bool, error) {
	seq, ok, err := tx.ImportKey(sid, th.key(k))
	if err == nil && !ok && th.legacy {
		seq, ok, err = tx.ImportKey(sid, k)
	}
	if err == nil && !ok {
		seq, ok = th.ownSeq(k)
	}
	return seq, ok, err
}

// find finds the seq of a message of the thread imported before, by any
// of its keys: the recorded keys first (in keyOf order), then, in the
// file's own session, the seq a key names there (the keys it brought
// first: they name it where it was first stored). via is the index (see
// keyOf) of the recorded key it was found by, else -1.
func (th *importThread) find(tx store.Tx, sid string, m *formats.Message) (seq uint64, via int, ok bool, err error) {
	for i := range len(m.Aliases) + 1 {
		if seq, ok, err := tx.ImportKey(sid, th.keyOf(m, i)); err != nil || ok {
			return seq, i, ok, err
		}
		if i == 0 && th.legacy {
			if seq, ok, err := tx.ImportKey(sid, m.Key); err != nil || ok {
				return seq, -1, ok, err
			}
		}
	}
	for _, k := range m.Aliases {
		if seq, ok := th.ownSeq(k); ok {
			return seq, -1, true, nil
		}
	}
	seq, ok = th.ownSeq(m.Key)
	return seq, -1, ok, nil
}

// importKey is a key to record: the seq it names.
type importKey struct {
	key string
	seq uint64
}

// missingKeys are the keys of a message found at seq (by keyOf(m, via))
// that the session has not recorded, so that each of them finds it from
// now on. Keys of the session's own messages are never recorded for
// them: they name them already.
func (th *importThread) missingKeys(tx store.Tx, sid string, m *formats.Message, seq uint64, via int) ([]importKey, error) {
	if len(m.Aliases) == 0 {
		return nil, nil // found by its only key
	}
	var out []importKey
	for i := range len(m.Aliases) + 1 {
		k := th.keyOf(m, i)
		if i == via {
			continue
		}
		if _, own := th.ownSeq(k); own {
			continue
		}
		if _, ok, err := tx.ImportKey(sid, k); err != nil {
			return nil, err
		} else if !ok {
			out = append(out, importKey{k, seq})
		}
	}
	return out, nil
}

// pendingSources are the thread's source keys that lead nowhere here
// yet, to record as leading to session sid. A source that leads to
// another session of this file is left to it.
func (th *importThread) pendingSources(tx store.Tx, sid string) []string {
	var out []string
	for _, src := range th.sources {
		if id, ok := tx.SourceSession(src); ok {
			if id == sid {
				continue
			}
			if _, err := tx.Session(id); err == nil {
				continue
			}
		}
		out = append(out, src)
	}
	return out
}

// putKeys records import keys, in key order: bbolt then fills its leaves
// in order instead of scattering a batch across the tree.
func putKeys(tx store.Tx, sid string, keys []importKey) error {
	slices.SortFunc(keys, func(a, b importKey) int { return strings.Compare(a.key, b.key) })
	for _, k := range keys {
		if err := tx.PutImportKey(sid, k.key, k.seq); err != nil {
			return err
		}
	}
	return nil
}

// sameOp reports whether two operations do the same: of one type, on the
// same items, with the same payload and conditions (the tokens a summary
// was counted at aside). Their IDs, authors, times and states may
// differ.
func sameOp(a, b *model.Op) bool {
	if a.Type != b.Type || a.Anchor != b.Anchor || !slices.Equal(a.Targets, b.Targets) || !slices.Equal(a.WhenTags, b.WhenTags) {
		return false
	}
	pa, pb := a.Payload, b.Payload
	pa.SummaryTokens, pb.SummaryTokens = 0, 0
	// Compared as stored, so an empty list and none, or a time in two
	// zones, are the same.
	ja, errA := json.Marshal(pa)
	jb, errB := json.Marshal(pb)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// checkKeepID decides, as the thread's first batch makes its session,
// whether the session keeps the file's ID: only if no session here has
// it (made since the import began: another import of the same file) and
// the batch's messages get the numbers they have in the file, so that
// <id>/m<n> names one message wherever the session is. A file with
// unreadable message lines would number them otherwise. A session that
// does not keep it is found again by the file's source key.
func (th *importThread) checkKeepID(tx store.Tx, batch []formats.Message) error {
	if _, err := tx.Session(th.info.Key); err == nil {
		th.keepID, th.taken, th.raced = false, th.info.Key, true
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	for i := 0; th.keepID && i < len(batch); i++ {
		if batch[i].Key != weftjsonl.Key(th.info.Key, model.MessageID(uint64(i+1))) {
			th.keepID, th.renumbered = false, true
		}
	}
	if !th.keepID {
		th.sources = append(th.sources, sourceKey(th.info))
	}
	return nil
}
