package reads

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"

	"weft/ops"
	"weft/ops/search"

	"weft/model"
)

// A paged read gives a next_cursor when it left something out. The
// cursor names the read it belongs to (the tool, the session, the other
// arguments) and the state it was given in, so that passing it to
// another read, or after the thread was edited, is refused with a
// message that says why, instead of giving the wrong items. Messages
// appended since do not make it stale where they cannot land inside what
// was given (newest-first and oldest-first orders): an agent whose own
// turns are recorded as it pages (the context proxy) can page on.

// maxCursor bounds a cursor argument: weft's are about 150 bytes.
const maxCursor = 1024

// readCursor is where a paged read stopped.
type readCursor struct {
	Tool    string `json:"t"`
	Session string `json:"s,omitempty"`
	// Args is a hash of the read's other arguments.
	Args uint64 `json:"q"`
	// Version and State are the session's version and a hash of what
	// an edit changes (its operations and active tags); for the lists
	// of sessions, a hash of every session's version.
	Version uint64 `json:"v"`
	State   uint64 `json:"o"`
	// Last is the last item given: the read continues after it.
	Last string `json:"a"`
}

func (c readCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readPlace is what a paged read's cursor must match.
type readPlace struct {
	tool    string
	session *model.Session // nil for the lists of sessions
	args    uint64
	state   uint64
	// strict: any write makes a cursor stale, not only an edit (an order
	// in which appended items can land before the last item given).
	strict bool
}

func (p readPlace) version() uint64 {
	if p.session == nil {
		return 0
	}
	return p.session.Version
}

func (p readPlace) sessionID() string {
	if p.session == nil {
		return ""
	}
	return p.session.ID
}

// cursor is the cursor that continues after the item last.
func (p readPlace) cursor(last string) *readCursor {
	return &readCursor{Tool: p.tool, Session: p.sessionID(), Args: p.args, Version: p.version(), State: p.state, Last: last}
}

// cursorArg reads a cursor argument for tool; an empty one is none.
// What it must match is checked by resume.
func cursorArg(tool, s string) (*readCursor, error) {
	if s == "" {
		return nil, nil
	}
	var c readCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil && len(s) <= maxCursor {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || len(s) > maxCursor || c.Tool == "" || c.Last == "" {
		return nil, ops.Invalidf("cursor %s is not a next_cursor weft gave: pass back a result's next_cursor as it is, or call %s without cursor", quoteShort(s), tool)
	}
	if c.Tool != tool {
		return nil, ops.Invalidf("cursor is a next_cursor of %s, not of %s: pass a next_cursor back to the tool that gave it", c.Tool, tool)
	}
	return &c, nil
}

// resume returns where in a read's order of n items (id gives their
// IDs) a cursor continues: right after the last item it gave. A cursor
// of another session or other arguments, or one the session's edits
// made stale, is refused as an invalid argument; nothing is read.
func (c *readCursor) resume(p readPlace, n int, id func(k int) string) (int, error) {
	if c == nil {
		return 0, nil
	}
	switch {
	case c.Session != p.sessionID():
		return 0, ops.Invalidf("cursor is for session %s, not %s: pass session_id=%s with it, or call %s without cursor", c.Session, p.sessionID(), c.Session, p.tool)
	case c.Args != p.args:
		return 0, ops.Invalidf("cursor was given for other arguments: pass it with the same arguments (max_tokens aside) as the call that gave it, or call %s without cursor", p.tool)
	case c.Version > p.version():
		return 0, ops.Invalidf("cursor is from version %d of session %s, which is at version %d: it is not one this file gave; call %s without cursor", c.Version, p.sessionID(), p.version(), p.tool)
	case c.State != p.state || (p.strict && c.Version != p.version()):
		return 0, ops.Invalidf("cursor is stale: %s; call %s again without cursor", p.since(c.Version), p.tool)
	}
	for k := range n {
		if id(k) == c.Last {
			return k + 1, nil
		}
	}
	return 0, ops.Invalidf("cursor is stale: %s is no longer in the result (%s); call %s again without cursor", c.Last, p.since(c.Version), p.tool)
}

// since says what changed since a cursor's version.
func (p readPlace) since(v uint64) string {
	if p.session == nil {
		return "the list of sessions changed since it was given"
	}
	if v == p.session.Version {
		return fmt.Sprintf("session %s is at version %d, as it was", p.session.ID, v)
	}
	return ops.ChangesSince(p.session, v)
}

// hashArgs hashes a read's arguments (a struct) but for session_id,
// max_tokens and cursor, which it clears in a copy: a cursor is good for
// the arguments it was given with, whatever budget it is passed with
// (and fitTo packs a read again to other budgets).
func hashArgs(a any) uint64 {
	v := reflect.New(reflect.TypeOf(a)).Elem()
	v.Set(reflect.ValueOf(a))
	for _, name := range [...]string{"SessionID", "MaxTokens", "Cursor"} {
		if f := v.FieldByName(name); f.IsValid() {
			f.SetZero()
		}
	}
	b, _ := json.Marshal(v.Interface())
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// threadState hashes what an edit changes in a session's view: its
// operations (which there are, on or off, reverted or not) and its
// active tags. Appending messages leaves it as it was.
func threadState(info *model.Session, ops []model.Op) uint64 {
	h := fnv.New64a()
	for _, op := range ops {
		_, _ = fmt.Fprintf(h, "%s/%t/%t;", op.ID, op.Active, op.RevertedAt != nil)
	}
	tags := slices.Clone(info.ActiveTags)
	slices.Sort(tags)
	for _, t := range tags {
		_, _ = fmt.Fprintf(h, "#%s", t)
	}
	return h.Sum64()
}

// listState hashes the lists of sessions: every session's ID and version.
func listState(ids []string, versions []uint64) uint64 {
	h := fnv.New64a()
	for i, id := range ids {
		_, _ = fmt.Fprintf(h, "%s@%d;", id, versions[i])
	}
	return h.Sum64()
}

// quoteShort quotes s, cut to a few dozen characters: an error echoes a
// hostile argument without carrying all of it.
func quoteShort(s string) string {
	const most = 40
	if len(s) > most {
		return fmt.Sprintf("%q… (%d bytes)", s[:search.RuneBack(s, most)], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// place is what a cursor of tool on this snapshot must match, for a read
// with arguments args (hashArgs).
func place(snap ops.Snapshot, tool string, args any, strict bool) readPlace {
	info := snap.Info
	return readPlace{tool: tool, session: &info, args: hashArgs(args), state: threadState(&info, snap.Ops), strict: strict}
}
