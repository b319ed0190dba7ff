package ops

import (
	"context"
	"fmt"
	"strings"

	"weft/model"
	"weft/store"
)

// RenameSessionArgs are rename_session's arguments.
type RenameSessionArgs struct {
	SessionID       string  `json:"session_id" jsonschema:"the session to rename (ID, unique ID prefix or title)"`
	Title           string  `json:"title" jsonschema:"the new title"`
	ExpectedVersion *uint64 `json:"expected_version,omitempty" jsonschema:"refuse the request if the session's version is not this one"`
}

// SessionChangeResult is what renaming or deleting a session returns.
type SessionChangeResult struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	Version   uint64 `json:"version"`
}

// ValidTitle checks a session title as every face must.
func ValidTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return "", Invalidf("title is empty: give the session a short title")
	}
	if len(title) > 200 {
		return "", Invalidf("title is %d bytes long; keep it under 200", len(title))
	}
	return title, nil
}

// RenameSession gives a session a new title. The thread is untouched;
// the session's history records the change.
func (s *Service) RenameSession(ctx context.Context, a RenameSessionArgs) (SessionChangeResult, error) {
	if strings.TrimSpace(a.SessionID) == "" {
		return SessionChangeResult{}, Invalidf("session_id is empty: name the session to rename (list_sessions shows them)")
	}
	title, err := ValidTitle(a.Title)
	if err != nil {
		return SessionChangeResult{}, err
	}
	info, err := s.Write(ctx, a.SessionID, a.ExpectedVersion, func(_ store.Tx, c *Thread, next *model.Session) (*Change, error) {
		if c.Info.Title == title {
			return nil, nil // already so: nothing to write
		}
		next.Title = title
		return &Change{What: fmt.Sprintf("renamed %q", title), Event: Event{Kind: EventSessionChanged}}, nil
	})
	if err != nil {
		return SessionChangeResult{}, err
	}
	return SessionChangeResult{SessionID: info.ID, Title: info.Title, Version: info.Version}, nil
}

// DeleteSessionArgs are delete_session's arguments.
type DeleteSessionArgs struct {
	SessionID       string  `json:"session_id" jsonschema:"the session to delete (its full ID: no prefix or title, as this cannot be undone)"`
	ExpectedVersion *uint64 `json:"expected_version,omitempty" jsonschema:"refuse the request if the session's version is not this one"`
}

// DeleteSession removes a session from the file: its messages, operations
// and import keys. It cannot be undone, so it takes the session's full ID
// only.
func (s *Service) DeleteSession(ctx context.Context, a DeleteSessionArgs) (SessionChangeResult, error) {
	if strings.TrimSpace(a.SessionID) == "" {
		return SessionChangeResult{}, Invalidf("session_id is empty: delete_session takes the full ID of the session to delete (list_sessions shows them)")
	}
	var gone model.Session
	info, err := s.Write(ctx, a.SessionID, a.ExpectedVersion, func(_ store.Tx, c *Thread, next *model.Session) (*Change, error) {
		if c.Info.ID != a.SessionID {
			return nil, Invalidf("session_id %q names session %s (%q) by prefix or title: delete_session takes the full ID, as it cannot be undone", a.SessionID, c.Info.ID, c.Info.Title)
		}
		gone = c.Info
		id := c.Info.ID
		return &Change{
			What:    fmt.Sprintf("deleted %q", c.Info.Title),
			Aside:   true,
			Deleted: true,
			Store:   func(tx store.Tx) error { return tx.DeleteSession(id) },
			Event:   Event{Kind: EventSessionDeleted},
		}, nil
	})
	if err != nil {
		return SessionChangeResult{}, err
	}
	return SessionChangeResult{SessionID: info.ID, Title: gone.Title, Version: gone.Version}, nil
}
