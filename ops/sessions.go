package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"weft/internal/english"
	"weft/internal/tokens"
	"weft/ops/progress"
	"weft/ops/thread"

	"weft/model"
	"weft/store"
)

// CreateSessionArgs are create_session's arguments.
type CreateSessionArgs struct {
	Title     string `json:"title,omitempty" jsonschema:"a short title for the session; may be left out with a room, which then names it (room (interface))"`
	Source    string `json:"source,omitempty" jsonschema:"where the thread comes from, e.g. claude-code"`
	Interface string `json:"interface,omitempty" jsonschema:"the interface the conversation happens in (cli, matrix, ...); with room, the session is that room's one conversation on this interface"`
	Room      string `json:"room,omitempty" jsonschema:"the room or channel; with interface, a pair that has a session already gets that session back (existing: true), never a second one"`
}

// CreateSessionResult is create_session's result.
type CreateSessionResult struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	Interface string `json:"interface,omitempty"`
	Room      string `json:"room,omitempty"`
	// Existing: the (room, interface) pair had this session already, and
	// it is returned as it is (the title given is not applied to it);
	// nothing was made.
	Existing bool `json:"existing"`
}

// Bounds on a room's and an interface's names, so that the title made
// of them stays a title.
const (
	maxRoom      = 120
	maxInterface = 40
)

// ValidRoom checks a room or an interface name (field says which) as
// every face must: trimmed, at most max bytes, one line. Empty is
// allowed: no room, or no interface.
func ValidRoom(field, name string, max int) (string, error) {
	name = strings.TrimSpace(name)
	if len(name) > max {
		return "", Invalidf("%s is %d bytes long; keep it to %d", field, len(name), max)
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", Invalidf("%s %q holds a control character (a line break, a tab): give it on one line", field, name)
	}
	return name, nil
}

// RoomArgs reads a room and an interface argument (ValidRoom).
func RoomArgs(room, iface string) (string, string, error) {
	room, err := ValidRoom("room", room, maxRoom)
	if err != nil {
		return "", "", err
	}
	iface, err = ValidRoom("interface", iface, maxInterface)
	return room, iface, err
}

// CreateSession makes a new, empty session. A session of a room and an
// interface both given is the pair's one conversation (seed 004): when
// the pair has a session, that session is returned (Existing) and none
// is made. The lookup and the create are one write, under the service's
// lock and in one store transaction, so two clients creating the same
// pair at once get the same session. A room without an interface, or an
// interface without a room, is a label only: every call makes a new
// session, as without them. Were a pair to have several sessions (made
// by a weft before this rule), the most recently updated is returned.
func (s *Service) CreateSession(ctx context.Context, a CreateSessionArgs) (CreateSessionResult, error) {
	room, iface, err := RoomArgs(a.Room, a.Interface)
	if err != nil {
		return CreateSessionResult{}, err
	}
	title := a.Title
	if strings.TrimSpace(title) == "" && room != "" {
		title = room
		if iface != "" {
			title += " (" + iface + ")"
		}
	}
	title, err = ValidTitle(title)
	if err != nil {
		return CreateSessionResult{}, err
	}
	now := s.Clock()
	var had *model.Session
	info, err := s.Create(ctx, model.Session{
		ID: s.ids.next(now), Title: title, CreatedAt: now,
		Source: a.Source, Interface: iface, Room: room,
	}, func(tx store.Tx, _ *Thread, _ *model.Session) (*Change, error) {
		if room != "" && iface != "" {
			in, err := tx.RoomSessions(room)
			if err != nil {
				return nil, err
			}
			if i := slices.IndexFunc(in, func(x model.Session) bool { return x.Interface == iface }); i >= 0 {
				had = &in[i]
				return nil, nil // the pair's session: nothing to write
			}
		}
		return &Change{What: "created", Event: Event{What: "created " + title}}, nil
	})
	if err != nil {
		return CreateSessionResult{}, err
	}
	res := CreateSessionResult{SessionID: info.ID, Title: info.Title, Interface: info.Interface, Room: info.Room}
	if had != nil {
		res = CreateSessionResult{SessionID: had.ID, Title: had.Title, Interface: had.Interface, Room: had.Room, Existing: true}
	}
	return res, nil
}

// SessionOut describes a session in results.
type SessionOut struct {
	SessionID    string `json:"session_id"`
	Title        string `json:"title"`
	MessageCount int    `json:"message_count"`
	Tokens       int    `json:"tokens"`
	// EffectiveTokens are the effective thread's tokens, what a provider
	// is sent (list_sessions gives them; elsewhere they are left out).
	EffectiveTokens *int     `json:"effective_tokens,omitempty"`
	OpCount         int      `json:"op_count"`
	Version         uint64   `json:"version"`
	ActiveTags      []string `json:"active_tags"`
	Source          string   `json:"source,omitempty"`
	Interface       string   `json:"interface,omitempty"`
	Room            string   `json:"room,omitempty"`
	// ForkOf is, for a fork, its source and the item it ends at.
	ForkOf    *model.Fork `json:"fork_of,omitempty"`
	CreatedAt string      `json:"created_at"`
	UpdatedAt string      `json:"updated_at"`
	// Unreadable says why the session's thread (or its record) cannot be
	// read from a damaged file; empty for a session that reads. weft
	// check lists what is damaged, weft salvage copies what is not.
	Unreadable string `json:"unreadable,omitempty"`
	// Proxy describes the requests the context proxy took for the
	// session since this weft started (list_sessions); nil for none.
	Proxy *ProxyStats `json:"proxy,omitempty"`
}

// SessionOutOf describes session x as results give it.
func SessionOutOf(x model.Session) SessionOut {
	tags := x.ActiveTags
	if tags == nil {
		tags = []string{}
	}
	return SessionOut{
		SessionID: x.ID, Title: x.Title, MessageCount: x.MessageCount, Tokens: x.Tokens,
		OpCount: x.OpCount, Version: x.Version, ActiveTags: tags,
		Source: x.Source, Interface: x.Interface, Room: x.Room, ForkOf: x.ForkOf,
		CreatedAt: FormatTime(x.CreatedAt), UpdatedAt: FormatTime(x.UpdatedAt),
	}
}

// AppendMessagesArgs are append_messages' arguments.
type AppendMessagesArgs struct {
	SessionID       string             `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
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
		return AppendResult{}, Invalidf("messages is empty: give at least one {role, content}")
	}
	if len(a.Messages) > maxAppend {
		return AppendResult{}, Invalidf("%d messages in one request is more than %d; send them in batches", len(a.Messages), maxAppend)
	}
	for i, m := range a.Messages {
		if err := m.Validate(); err != nil {
			return AppendResult{}, Invalidf("messages[%d]: %v", i, err)
		}
	}
	msgs := slices.Clone(a.Messages)
	// Counting the tokens is most of a long append; the write is the
	// last step.
	pm := progress.New(ctx, len(msgs)+1, fmt.Sprintf("counting the tokens of %d messages", len(msgs)))
	countEachMetered(len(msgs), func(i int) (*model.NewMessage, []model.Part) { return &msgs[i], nil }, pm)
	pm.Stage(fmt.Sprintf("%d messages appended", len(msgs)))
	var ids []model.ItemID
	info, err := s.Write(ctx, a.SessionID, a.ExpectedVersion, func(_ store.Tx, th *Thread, next *model.Session) (*Change, error) {
		var ch *Change
		ch, ids = s.appendChange(th, next, msgs, "appended")
		return ch, nil
	})
	if err != nil {
		return AppendResult{}, err
	}
	pm.Add(1)
	return AppendResult{SessionID: info.ID, Appended: len(ids), IDs: ids, Version: info.Version}, nil
}

// appendChange stores messages at the end of a thread: the one way every
// tool appends (append_messages, add_turn, the pre-request hook). what
// ends the change's description ("3 messages appended").
func (s *Service) appendChange(th *Thread, next *model.Session, nms []model.NewMessage, what string) (*Change, []model.ItemID) {
	now := s.Clock()
	msgs := make([]model.Message, len(nms))
	heads := make([]model.Head, len(nms))
	ids := make([]model.ItemID, len(nms))
	tokens := 0
	for i, nm := range nms {
		msgs[i] = StoredMessage(uint64(next.MessageCount+1+i), nm, now, "")
		heads[i] = msgs[i].Head()
		ids[i] = msgs[i].ID
		tokens += msgs[i].Tokens
	}
	next.MessageCount += len(msgs)
	next.Tokens += tokens
	return &Change{
		What:  english.Count(len(msgs), "message") + " " + what,
		Store: func(tx store.Tx) error { return tx.AppendMessages(th.Info.ID, msgs) },
		Apply: func(th *Thread) {
			th.Heads = append(th.Heads, heads...)
			if th.view != nil {
				th.view = thread.AppendToView(th.view, heads)
			}
		},
		Event: Event{Kind: EventAppended},
	}, ids
}

// MessageTokens counts what a message sends a model: its parts when it
// has them (tool calls and their inputs, results, text, thinking), else
// its content. Importers render a content from the parts, which would
// count twice.
func MessageTokens(content string, rawParts json.RawMessage) int {
	return partsTokens(content, model.DecodeParts(rawParts))
}

// newTokens is MessageTokens of a new message, from parts when they are
// at hand (nil: its parts as read, or decoded).
func newTokens(m *model.NewMessage, parts []model.Part) int {
	switch {
	case parts != nil:
	case len(m.Parts) == 0 && len(m.ReadParts) > 0:
		parts = m.ReadParts
	default:
		return MessageTokens(m.Content, m.Parts)
	}
	return partsTokens(m.Content, parts)
}

// partsTokens is MessageTokens of a message's parts decoded.
func partsTokens(content string, parts []model.Part) int {
	if len(parts) == 0 {
		return tokens.Count(content)
	}
	n := 0
	for _, p := range parts {
		switch p.Type {
		case model.PartText, model.PartThinking, model.PartToolResult:
			n += tokens.Count(p.Text)
		case model.PartToolCall:
			n += tokens.Count(p.ToolName) + tokens.Count(string(p.Input))
		}
	}
	return n
}

// CountEach counts the tokens of the n messages at(i) gives that have no
// count yet, on every core. Writes count before they take the service's
// lock: a long message must not hold up every other request.
func CountEach(n int, at func(i int) *model.NewMessage) {
	countEachMetered(n, func(i int) (*model.NewMessage, []model.Part) { return at(i), nil }, nil)
}

// CountCallerMessages is CountEach for a caller's messages, counted from
// the parts they were read with (not decoded again: a message may be
// megabytes).
func CountCallerMessages(msgs []CallerMessage) {
	countEachMetered(len(msgs), func(i int) (*model.NewMessage, []model.Part) {
		m := &msgs[i]
		if len(m.Parts) == 0 {
			return &m.Message, nil
		}
		return &m.Message, m.Parts
	}, nil)
}

// countEachMetered is CountEach, telling pm (which may be nil) how many
// messages were counted as it goes; at gives a message and, when it
// has them at hand, its parts decoded (nil: decoded from the message).
func countEachMetered(n int, at func(i int) (*model.NewMessage, []model.Part), pm *progress.Meter) {
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			counted := 0
			for i := w; i < n; i += workers {
				if m, parts := at(i); m.Tokens <= 0 {
					m.Tokens = newTokens(m, parts)
				}
				// Counted in chunks: a report per message would make
				// the workers queue on the meter's lock.
				if counted++; counted == 64 {
					pm.Add(counted)
					counted = 0
				}
			}
			pm.Add(counted)
		})
	}
	wg.Wait()
}

// StoredMessage completes a new message for storing: seq and ID, time,
// digest and token count. digest is the message's where it is known (""
// where not): an import has its reader's, or hashed it on every core, not
// in the one writer.
func StoredMessage(seq uint64, nm model.NewMessage, now time.Time, digest string) model.Message {
	if digest == "" {
		digest = model.ContentDigest(nm.Role, nm.Content)
	}
	at := nm.CreatedAt
	if at.IsZero() {
		at = now
	}
	n := nm.Tokens
	if n <= 0 {
		n = newTokens(&nm, nil)
	}
	return model.Message{
		ID: model.MessageID(seq), Seq: seq, Role: nm.Role, Content: nm.Content, Name: nm.Name,
		Parts: nm.Parts, ReadParts: nm.ReadParts, CreatedAt: at.UTC(), Tokens: n, Meta: nm.Meta,
		Digest: digest,
	}
}

// AddTurnArgs are add_turn's arguments (seed 004): a user's query and,
// optionally, the assistant's response.
type AddTurnArgs struct {
	SessionID       string  `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Query           string  `json:"query" jsonschema:"what the user said"`
	Response        string  `json:"response,omitempty" jsonschema:"what the assistant answered, if it has"`
	UserName        string  `json:"user_name,omitempty" jsonschema:"the user's name, kept as the message's name"`
	ExpectedVersion *uint64 `json:"expected_version,omitempty" jsonschema:"refuse the write if the session's version is not this one"`
}

// AddTurn appends a user message and, if given, the assistant's response.
func (s *Service) AddTurn(ctx context.Context, a AddTurnArgs) (AppendResult, error) {
	if strings.TrimSpace(a.Query) == "" {
		return AppendResult{}, Invalidf("query is empty: a turn starts with what the user said")
	}
	msgs := []model.NewMessage{{Role: model.RoleUser, Content: a.Query, Name: a.UserName}}
	if a.Response != "" {
		msgs = append(msgs, model.NewMessage{Role: model.RoleAssistant, Content: a.Response})
	}
	return s.AppendMessages(ctx, AppendMessagesArgs{SessionID: a.SessionID, Messages: msgs, ExpectedVersion: a.ExpectedVersion})
}

// FormatTime writes a time the way every result does: RFC 3339 in UTC.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
