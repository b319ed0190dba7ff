package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"weft/model"
	"weft/store"
)

// Preferences are what a model asked to see in its next context
// (request_context_slice). They are kept by item ID, so edits in between
// do not shift them, and consumed by the next assembly, once.
type Preferences struct {
	FirstID              model.ItemID `json:"first_id,omitempty"`
	LastID               model.ItemID `json:"last_id,omitempty"`
	StartIndex           int          `json:"start_index"`
	EndIndex             int          `json:"end_index"`
	Query                string       `json:"query,omitempty"`
	IncludeSearchResults bool         `json:"include_search_results,omitempty"`
	MaxContextMessages   int          `json:"max_context_messages,omitempty"`
	RequestedAt          string       `json:"requested_at"`
	RequestedBy          string       `json:"requested_by"`
}

// ContextSliceArgs are request_context_slice's arguments (seed 001).
type ContextSliceArgs struct {
	SessionID            string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	StartMessageIndex    *int   `json:"start_message_index" jsonschema:"first index of the slice, 0-based in the effective thread"`
	EndMessageIndex      *int   `json:"end_message_index" jsonschema:"last index of the slice (inclusive)"`
	IncludeSearchResults bool   `json:"include_search_results,omitempty" jsonschema:"also include the messages that match query"`
	Query                string `json:"query,omitempty" jsonschema:"substring whose matches to include (with include_search_results)"`
	MaxContextMessages   int    `json:"max_context_messages,omitempty" jsonschema:"limit the next context to this many messages"`
}

// ContextSliceResult is request_context_slice's result.
type ContextSliceResult struct {
	Success bool        `json:"success"`
	Pending Preferences `json:"pending"`
}

// RequestContextSlice records what the next assembled context should hold.
// It replaces any preferences still pending; the next assembly uses them
// once. It does not change the thread, so the version stays.
func (s *Service) RequestContextSlice(ctx context.Context, a ContextSliceArgs) (ContextSliceResult, error) {
	if a.StartMessageIndex == nil || a.EndMessageIndex == nil {
		return ContextSliceResult{}, invalidf("give start_message_index and end_message_index (inclusive, 0-based in the effective thread)")
	}
	if a.MaxContextMessages < 0 {
		return ContextSliceResult{}, invalidf("max_context_messages %d is negative", a.MaxContextMessages)
	}
	if a.IncludeSearchResults && strings.TrimSpace(a.Query) == "" {
		return ContextSliceResult{}, invalidf("include_search_results needs a query to search for")
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return ContextSliceResult{}, err
	}
	v := snap.view
	start, end := *a.StartMessageIndex, *a.EndMessageIndex
	if err := checkRange(start, end, v.Len()); err != nil {
		return ContextSliceResult{}, err
	}
	p := Preferences{
		FirstID: v.ID(v.Items[start]), LastID: v.ID(v.Items[end]), StartIndex: start, EndIndex: end,
		Query: a.Query, IncludeSearchResults: a.IncludeSearchResults, MaxContextMessages: a.MaxContextMessages,
		RequestedAt: formatTime(s.clock()), RequestedBy: AuthorFrom(ctx),
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return ContextSliceResult{}, err
	}
	if err := s.st.Update(func(tx *store.Tx) error { return tx.PutPrefs(snap.info.ID, raw) }); err != nil {
		return ContextSliceResult{}, err
	}
	return ContextSliceResult{Success: true, Pending: p}, nil
}

// AssembleArgs are assemble_context's arguments.
type AssembleArgs struct {
	SessionID   string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Format      string `json:"format,omitempty" jsonschema:"openai (chat messages, default) or text (one transcript)"`
	MaxMessages int    `json:"max_messages,omitempty" jsonschema:"keep at most this many of the latest messages (0: all)"`
}

// ChatMessage is a message as a chat-completions request carries it.
type ChatMessage struct {
	Role    model.Role `json:"role"`
	Content string     `json:"content"`
	Name    string     `json:"name,omitempty"`
}

// AssembleResult is assemble_context's result.
type AssembleResult struct {
	SessionID string        `json:"session_id"`
	Version   uint64        `json:"version"`
	Format    string        `json:"format"`
	Messages  []ChatMessage `json:"messages,omitempty"`
	Text      string        `json:"text,omitempty"`
	Count     int           `json:"message_count"`
	Tokens    int           `json:"tokens"`
	// LeftOut counts the effective thread's items not included.
	LeftOut int `json:"left_out"`
	// Preferences are the pending ones this assembly used up, if any.
	Preferences *Preferences `json:"preferences_used"`
}

// AssembleContext builds the context to send: the effective thread, or
// the slice pending preferences ask for (consumed here, once), trimmed to
// the latest max_messages.
func (s *Service) AssembleContext(_ context.Context, a AssembleArgs) (AssembleResult, error) {
	format := a.Format
	switch format {
	case "":
		format = "openai"
	case "openai", "text":
	default:
		return AssembleResult{}, invalidf("format %q is not openai or text", a.Format)
	}
	if a.MaxMessages < 0 {
		return AssembleResult{}, invalidf("max_messages %d is negative; use 0 for all", a.MaxMessages)
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return AssembleResult{}, err
	}
	v := snap.view
	res := AssembleResult{SessionID: snap.info.ID, Version: snap.info.Version, Format: format}
	err = s.st.Update(func(tx *store.Tx) error {
		raw, err := tx.TakePrefs(snap.info.ID)
		if err != nil {
			return err
		}
		indices := span(0, v.Len())
		limit := a.MaxMessages
		if raw != nil {
			var p Preferences
			if err := json.Unmarshal(raw, &p); err != nil {
				return fmt.Errorf("pending preferences of session %s are unreadable: %w", snap.info.ID, err)
			}
			res.Preferences = &p
			if indices, err = s.preferred(tx, v, &p); err != nil {
				return err
			}
			if p.MaxContextMessages > 0 && (limit == 0 || p.MaxContextMessages < limit) {
				limit = p.MaxContextMessages
			}
		}
		if limit > 0 && len(indices) > limit {
			indices = indices[len(indices)-limit:]
		}
		msgs, err := messagesOut(tx, v, indices)
		if err != nil {
			return err
		}
		res.Count, res.LeftOut = len(msgs), v.Len()-len(msgs)
		var text strings.Builder
		for _, m := range msgs {
			res.Tokens += m.Tokens
			if format == "text" {
				fmt.Fprintf(&text, "%s: %s\n\n", m.Role, m.Content)
				continue
			}
			res.Messages = append(res.Messages, ChatMessage{Role: m.Role, Content: m.Content, Name: m.Name})
		}
		res.Text = text.String()
		return nil
	})
	return res, err
}

// preferred returns the indices pending preferences select: the slice
// (found again by ID; by its recorded indices if an edit removed an end)
// and, if asked, the search matches, in thread order.
func (s *Service) preferred(tx *store.Tx, v *model.View, p *Preferences) ([]int, error) {
	n := v.Len()
	start, end := v.IndexOf(p.FirstID), v.IndexOf(p.LastID)
	if start < 0 {
		start = min(p.StartIndex, n)
	}
	if end < 0 {
		end = min(p.EndIndex, n-1)
	}
	indices := span(start, end+1)
	if p.IncludeSearchResults && p.Query != "" {
		matches, _, err := searchView(tx, v, p.Query, false, 0)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if m < start || m > end {
				indices = append(indices, m)
			}
		}
		slices.Sort(indices)
	}
	return indices, nil
}
