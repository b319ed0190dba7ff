package model

import "time"

// Session is one conversation thread and what is known about it without
// reading its messages.
type Session struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// MessageCount is the number of stored messages; their seqs are
	// 1..MessageCount.
	MessageCount int `json:"message_count"`
	// Tokens is the sum of the stored messages' tokens.
	Tokens int `json:"tokens"`
	// OpCount is the number of operations ever recorded, reverted included.
	OpCount int `json:"op_count"`

	// Version changes on every write to the session.
	Version uint64 `json:"version"`
	// ActiveTags decide which conditional operations apply.
	ActiveTags []string `json:"active_tags,omitempty"`

	Source    string `json:"source,omitempty"`
	Interface string `json:"interface,omitempty"`
	Room      string `json:"room,omitempty"`

	// Changes is a short log of the latest writes, newest last, so a
	// conflicting editor can be told what changed since its version.
	Changes []Change `json:"changes,omitempty"`

	// Memory is the session's memory policy; nil: weft changes nothing
	// by itself.
	Memory *MemoryPolicy `json:"memory,omitempty"`

	// ForkOf is, for a fork, the session it was forked from and where;
	// nil for a session that is no fork.
	ForkOf *Fork `json:"fork_of,omitempty"`
}

// Fork is where a fork came from: its source session, and the item of
// the source's effective thread it ends at (its index then).
type Fork struct {
	SessionID string `json:"session_id"`
	At        ItemID `json:"at"`
	Index     int    `json:"index"`
}

// Change is one entry of a session's recent-writes log.
type Change struct {
	Version uint64    `json:"version"`
	At      time.Time `json:"at"`
	Author  string    `json:"author,omitempty"`
	What    string    `json:"what"`
}

// MaxChanges bounds Session.Changes.
const MaxChanges = 32

// Record appends a change, bumps the version and keeps the log bounded.
func (s *Session) Record(at time.Time, author, what string) {
	s.Version++
	s.UpdatedAt = at
	s.Changes = append(s.Changes, Change{Version: s.Version, At: at, Author: author, What: what})
	if n := len(s.Changes); n > MaxChanges {
		s.Changes = append([]Change(nil), s.Changes[n-MaxChanges:]...)
	}
}

// ChangesSince returns the logged changes newer than version v, and
// whether the log reaches back far enough to list them all.
func (s *Session) ChangesSince(v uint64) ([]Change, bool) {
	var out []Change
	for _, c := range s.Changes {
		if c.Version > v {
			out = append(out, c)
		}
	}
	complete := len(out) == 0 || out[0].Version == v+1
	return out, complete
}
