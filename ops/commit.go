package ops

import (
	"context"
	"encoding/json"
	"errors"

	"weft/store"
)

// errStale refuses a write prepared over a cached session another weft
// on the same store has written since.
var errStale = errors.New("the session changed in the store since it was read")

// maxStale bounds how often a write is prepared again over sessions
// another weft keeps writing.
const maxStale = 200

// checkCurrent refuses, with errStale, a write whose sessions the store holds
// at another version than the cache (another weft on a shared store
// wrote them since): the write is found and prepared again from the
// start, so every check its Find makes (the expected version, what the
// messages continue) holds against what the store holds. A conflicting
// write committed meanwhile makes tx fail with store.ErrConflict, and
// the write is run again too.
func (s *Service) checkCurrent(tx store.Tx, reqs []*WriteReq) error {
	if !s.shared {
		return nil
	}
	for _, r := range reqs {
		if r.Created {
			continue
		}
		if cur, err := tx.Session(r.c.Info.ID); err != nil || cur.Version != r.c.Info.Version {
			return errStale
		}
	}
	return nil
}

// loadThread reads session id's record, heads and operations in tx.
func loadThread(tx store.Tx, id string) (*Thread, error) {
	th := &Thread{}
	var err error
	if th.Info, err = tx.Session(id); err != nil {
		return nil, err
	}
	if th.Heads, err = tx.Heads(id); err != nil {
		return nil, err
	}
	th.Ops, err = tx.Ops(id)
	return th, err
}

// current reports whether the store holds session th at the version
// cached (a shared store, where other wefts write).
func (s *Service) current(th *Thread) bool {
	var v uint64
	err := s.st.View(func(tx store.Tx) error {
		info, err := tx.Session(th.Info.ID)
		v = info.Version
		return err
	})
	return err == nil && v == th.Info.Version
}

// prepareAll prepares each session's change in tx and writes it; a
// refusal goes to refused.
func (s *Service) prepareAll(tx store.Tx, reqs []*WriteReq, author, origin string, refused *error) error {
	writes := 0
	for _, r := range reqs {
		if r.ch, *refused = r.Prepare(tx, r.c, &r.next); *refused != nil {
			return *refused
		}
		ch := r.ch
		if ch == nil {
			continue
		}
		if r.Created && r.next.Memory == nil {
			// A new session gets the file's memory policy for its
			// kind, if it has one.
			r.next.Memory = defaultPolicy(tx, r.Proxied)
		}
		writes++
		if !ch.Aside {
			r.next.Record(s.Clock(), author, ch.What)
		}
		if ch.Op != nil && ch.Op.Version == 0 {
			ch.Op.Version = r.next.Version // a new operation records its version
		}
		if !ch.Aside || r.Created {
			if err := tx.PutSession(r.next); err != nil {
				return err
			}
		}
		if ch.Store != nil {
			if err := ch.Store(tx); err != nil {
				return err
			}
		}
		if ch.Op != nil {
			if err := tx.PutOp(r.next.ID, *ch.Op); err != nil {
				return err
			}
		}
		r.event = s.eventOf(r, author, origin)
		if a, ok := tx.(store.Announcer); ok {
			// The other wefts on a shared store hear of it at the commit.
			payload, _ := json.Marshal(announced{From: s.instance, Event: r.event}) // plain data
			if err := a.Announce(payload); err != nil {
				return err
			}
		}
	}
	if writes == 0 {
		return errNothing
	}
	return nil
}

// eventOf is what the write of r announces.
func (s *Service) eventOf(r *WriteReq, author, origin string) Event {
	ch := r.ch
	ev := ch.Event
	if r.Created {
		ev.Kind = EventSessionCreated
	}
	if ev.What == "" {
		ev.What = ch.What
	}
	ev.SessionID, ev.Title, ev.Version, ev.Author, ev.At, ev.Origin = r.next.ID, r.next.Title, r.next.Version, author, r.next.UpdatedAt, origin
	if ch.Aside {
		ev.At = s.Clock()
	}
	if ch.Op != nil {
		ev.OpID, ev.OpType = ch.Op.ID, ch.Op.Type
	}
	return ev
}

// announced is what the other wefts on a shared store hear of a write:
// its event, and which weft made it (its own hears it already).
type announced struct {
	From  string `json:"from"`
	Event Event  `json:"event"`
}

// FollowStore makes the writes of the other wefts on a shared store
// (store.Listener) known here until ctx ends or the store closes: the
// session they wrote is read again when next used, and its event goes to
// this service's subscribers (a TUI, an MCP client, a relay) as a write
// here does. A store that has no other writers returns at once.
func (s *Service) FollowStore(ctx context.Context) {
	l, ok := s.st.(store.Listener)
	if !ok {
		return
	}
	_ = l.Listen(ctx, func(payload []byte) {
		if payload == nil {
			// A break: whatever was cached may be behind.
			s.mu.Lock()
			clear(s.threads)
			s.mu.Unlock()
			return
		}
		var a announced
		if json.Unmarshal(payload, &a) != nil || a.From == s.instance {
			return
		}
		s.mu.Lock()
		if th, ok := s.threads[a.Event.SessionID]; ok && (th.Info.Version != a.Event.Version || a.Event.Kind == EventSessionDeleted) {
			delete(s.threads, a.Event.SessionID)
		}
		s.mu.Unlock()
		s.bus.publish(a.Event)
	})
}
