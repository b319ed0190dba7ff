package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"weft/model"
	"weft/store"
)

// CreateSessionArgs are create_session's arguments.
type CreateSessionArgs struct {
	Title     string `json:"title" jsonschema:"a short title for the session"`
	Source    string `json:"source,omitempty" jsonschema:"where the thread comes from, e.g. claude-code"`
	Interface string `json:"interface,omitempty" jsonschema:"the interface the conversation happens in (cli, matrix, ...)"`
	Room      string `json:"room,omitempty" jsonschema:"the room or channel, for interfaces that have them"`
}

// CreateSessionResult is create_session's result.
type CreateSessionResult struct {
	SessionID string `json:"session_id"`
}

// CreateSession makes a new, empty session.
func (s *Service) CreateSession(ctx context.Context, a CreateSessionArgs) (CreateSessionResult, error) {
	title := strings.TrimSpace(a.Title)
	if title == "" {
		return CreateSessionResult{}, invalidf("title is empty: give the session a short title")
	}
	if len(title) > 200 {
		return CreateSessionResult{}, invalidf("title is %d bytes long; keep it under 200", len(title))
	}
	now := s.clock()
	info := model.Session{
		ID: s.ids.next(now), Title: title, CreatedAt: now,
		Source: a.Source, Interface: a.Interface, Room: a.Room,
	}
	author := AuthorFrom(ctx)
	info.Record(now, author, "created")
	s.mu.Lock()
	err := s.st.Update(func(tx *store.Tx) error { return tx.PutSession(info) })
	if err == nil {
		s.latest = info.ID
	}
	s.mu.Unlock()
	if err != nil {
		return CreateSessionResult{}, err
	}
	s.bus.publish(Event{SessionID: info.ID, Version: info.Version, Kind: EventSessionCreated, Author: author, What: "created " + title, At: now})
	return CreateSessionResult{SessionID: info.ID}, nil
}

// ListSessionsArgs are list_sessions' arguments.
type ListSessionsArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"at most this many sessions, most recently updated first; 0 means all"`
}

// SessionOut describes a session in results.
type SessionOut struct {
	SessionID    string   `json:"session_id"`
	Title        string   `json:"title"`
	MessageCount int      `json:"message_count"`
	Tokens       int      `json:"tokens"`
	OpCount      int      `json:"op_count"`
	Version      uint64   `json:"version"`
	ActiveTags   []string `json:"active_tags"`
	Source       string   `json:"source,omitempty"`
	Interface    string   `json:"interface,omitempty"`
	Room         string   `json:"room,omitempty"`
	CreatedAt    string   `json:"created_at"`
	UpdatedAt    string   `json:"updated_at"`
}

// ListSessionsResult is list_sessions' result.
type ListSessionsResult struct {
	Sessions []SessionOut `json:"sessions"`
	Total    int          `json:"total"`
}

func sessionOut(x model.Session) SessionOut {
	tags := x.ActiveTags
	if tags == nil {
		tags = []string{}
	}
	return SessionOut{
		SessionID: x.ID, Title: x.Title, MessageCount: x.MessageCount, Tokens: x.Tokens,
		OpCount: x.OpCount, Version: x.Version, ActiveTags: tags,
		Source: x.Source, Interface: x.Interface, Room: x.Room,
		CreatedAt: formatTime(x.CreatedAt), UpdatedAt: formatTime(x.UpdatedAt),
	}
}

// ListSessions lists sessions, most recently updated first.
func (s *Service) ListSessions(_ context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
	if a.Limit < 0 {
		return ListSessionsResult{}, invalidf("limit %d is negative; use 0 for all sessions or a positive number", a.Limit)
	}
	sessions, err := s.st.Sessions()
	if err != nil {
		return ListSessionsResult{}, err
	}
	res := ListSessionsResult{Sessions: []SessionOut{}, Total: len(sessions)}
	for i, x := range sessions {
		if a.Limit > 0 && i >= a.Limit {
			break
		}
		res.Sessions = append(res.Sessions, sessionOut(x))
	}
	return res, nil
}

// AppendMessagesArgs are append_messages' arguments.
type AppendMessagesArgs struct {
	SessionID       string             `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Messages        []model.NewMessage `json:"messages" jsonschema:"messages to store at the end of the thread, each with role (system, user, assistant, tool) and content"`
	ExpectedVersion *uint64            `json:"expected_version,omitempty" jsonschema:"refuse the write if the session's version is not this one"`
}

// AppendResult is the result of append_messages and add_turn.
type AppendResult struct {
	SessionID string         `json:"session_id"`
	Appended  int            `json:"appended"`
	IDs       []model.ItemID `json:"ids"`
	Version   uint64         `json:"version"`
}

// maxAppend bounds one append request; importers write larger batches
// through their own path.
const maxAppend = 10000

// AppendMessages stores messages at the end of a session's thread. The new
// messages land at the end of the effective thread; the view is extended,
// not applied again.
func (s *Service) AppendMessages(ctx context.Context, a AppendMessagesArgs) (AppendResult, error) {
	if len(a.Messages) == 0 {
		return AppendResult{}, invalidf("messages is empty: give at least one {role, content}")
	}
	if len(a.Messages) > maxAppend {
		return AppendResult{}, invalidf("%d messages in one request is more than %d; send them in batches", len(a.Messages), maxAppend)
	}
	for i, m := range a.Messages {
		if err := m.Validate(); err != nil {
			return AppendResult{}, invalidf("messages[%d]: %v", i, err)
		}
	}
	var ids []model.ItemID
	info, err := s.write(ctx, a.SessionID, a.ExpectedVersion, func(th *thread, next *model.Session) (*change, error) {
		now := s.clock()
		msgs := make([]model.Message, len(a.Messages))
		heads := make([]model.Head, len(a.Messages))
		ids = make([]model.ItemID, len(a.Messages))
		tokens := 0
		for i, nm := range a.Messages {
			seq := uint64(next.MessageCount + 1 + i)
			msgs[i] = storedMessage(seq, nm, now)
			heads[i] = msgs[i].Head()
			ids[i] = msgs[i].ID
			tokens += msgs[i].Tokens
		}
		next.MessageCount += len(msgs)
		next.Tokens += tokens
		return &change{
			what:  plural(len(msgs), "message", "messages") + " appended",
			store: func(tx *store.Tx) error { return tx.AppendMessages(th.info.ID, msgs) },
			apply: func(th *thread) {
				th.heads = append(th.heads, heads...)
				if th.view != nil {
					th.view = AppendToView(th.view, heads)
				}
			},
			event: Event{Kind: EventAppended},
		}, nil
	})
	if err != nil {
		return AppendResult{}, err
	}
	return AppendResult{SessionID: info.ID, Appended: len(ids), IDs: ids, Version: info.Version}, nil
}

// storedMessage completes a new message for storing: seq and ID, time,
// digest and token count.
func storedMessage(seq uint64, nm model.NewMessage, now time.Time) model.Message {
	at := nm.CreatedAt
	if at.IsZero() {
		at = now
	}
	tokens := nm.Tokens
	if tokens <= 0 {
		tokens = CountTokens(nm.Content)
	}
	return model.Message{
		ID: model.MessageID(seq), Seq: seq, Role: nm.Role, Content: nm.Content, Name: nm.Name,
		Parts: nm.Parts, CreatedAt: at.UTC(), Tokens: tokens, Meta: nm.Meta,
		Digest: model.ContentDigest(nm.Role, nm.Content),
	}
}

// AddTurnArgs are add_turn's arguments (seed 004): a user's query and,
// optionally, the assistant's response.
type AddTurnArgs struct {
	SessionID       string  `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Query           string  `json:"query" jsonschema:"what the user said"`
	Response        string  `json:"response,omitempty" jsonschema:"what the assistant answered, if it has"`
	UserName        string  `json:"user_name,omitempty" jsonschema:"the user's name, kept as the message's name"`
	ExpectedVersion *uint64 `json:"expected_version,omitempty" jsonschema:"refuse the write if the session's version is not this one"`
}

// AddTurn appends a user message and, if given, the assistant's response.
func (s *Service) AddTurn(ctx context.Context, a AddTurnArgs) (AppendResult, error) {
	if strings.TrimSpace(a.Query) == "" {
		return AppendResult{}, invalidf("query is empty: a turn starts with what the user said")
	}
	msgs := []model.NewMessage{{Role: model.RoleUser, Content: a.Query, Name: a.UserName}}
	if a.Response != "" {
		msgs = append(msgs, model.NewMessage{Role: model.RoleAssistant, Content: a.Response})
	}
	return s.AppendMessages(ctx, AppendMessagesArgs{SessionID: a.SessionID, Messages: msgs, ExpectedVersion: a.ExpectedVersion})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// formatTime writes a time the way every result does: RFC 3339 in UTC.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
