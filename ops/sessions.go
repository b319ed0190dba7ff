package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"weft/internal/fuzzy"
	"weft/internal/tokens"
	"weft/ops/summary"
	"weft/ops/thread"

	"weft/formats"
	"weft/formats/export"
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
	title, err := validTitle(a.Title)
	if err != nil {
		return CreateSessionResult{}, err
	}
	now := s.clock()
	info, err := s.create(ctx, model.Session{
		ID: s.ids.next(now), Title: title, CreatedAt: now,
		Source: a.Source, Interface: a.Interface, Room: a.Room,
	}, func(*store.Tx, *cached, *model.Session) (*change, error) {
		return &change{what: "created", event: Event{What: "created " + title}}, nil
	})
	if err != nil {
		return CreateSessionResult{}, err
	}
	return CreateSessionResult{SessionID: info.ID}, nil
}

// ListSessionsArgs are list_sessions' arguments.
type ListSessionsArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"at most this many sessions, most recently updated first; 0 means all"`
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
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
	// Unreadable says why the session's thread (or its record) cannot be
	// read from a damaged file; empty for a session that reads. weft
	// check lists what is damaged, weft salvage copies what is not.
	Unreadable string `json:"unreadable,omitempty"`
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

// ListSessions lists sessions, most recently updated first. In a damaged
// file, a session whose thread cannot be read is still listed, from its
// record, with Unreadable saying why; one whose record cannot be read is
// listed last, by its ID alone.
func (s *Service) ListSessions(_ context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
	if a.Limit < 0 {
		return ListSessionsResult{}, invalidf("limit %d is negative; use 0 for all sessions or a positive number", a.Limit)
	}
	var sessions []model.Session
	var bad []error
	err := s.st.View(func(tx *store.Tx) error {
		sessions, bad = tx.AllSessions()
		return nil
	})
	if err != nil {
		return ListSessionsResult{}, err
	}
	res := ListSessionsResult{Sessions: []SessionOut{}, Total: len(sessions) + len(bad)}
	full := func() bool { return a.Limit > 0 && len(res.Sessions) >= a.Limit }
	for _, x := range sessions {
		if full() {
			break
		}
		out := sessionOut(x)
		n := x.Tokens
		if x.OpCount > 0 {
			_, v, err := s.View(x.ID)
			switch {
			case unreadable(err):
				out.Unreadable = err.Error()
				res.Sessions = append(res.Sessions, out)
				continue
			case err != nil:
				return ListSessionsResult{}, err
			}
			n = v.Tokens
		}
		out.EffectiveTokens = &n
		res.Sessions = append(res.Sessions, out)
	}
	for _, err := range bad {
		if full() {
			break
		}
		var ce *store.CorruptError
		if errors.As(err, &ce) {
			res.Sessions = append(res.Sessions, SessionOut{SessionID: ce.Session, ActiveTags: []string{}, Unreadable: err.Error()})
		}
	}
	return res, nil
}

// unreadable reports whether err says the file is damaged where a session
// is kept, rather than that the request was wrong.
func unreadable(err error) bool {
	return errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrDamaged)
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
	msgs := slices.Clone(a.Messages)
	// Counting the tokens is most of a long append; the write is the
	// last step.
	pm := newMeter(ctx, len(msgs)+1, fmt.Sprintf("counting the tokens of %d messages", len(msgs)))
	countEachMetered(len(msgs), func(i int) *model.NewMessage { return &msgs[i] }, pm)
	pm.stage(fmt.Sprintf("%d messages appended", len(msgs)))
	var ids []model.ItemID
	info, err := s.write(ctx, a.SessionID, a.ExpectedVersion, func(_ *store.Tx, th *cached, next *model.Session) (*change, error) {
		var ch *change
		ch, ids = s.appendChange(th, next, msgs, "appended")
		return ch, nil
	})
	if err != nil {
		return AppendResult{}, err
	}
	pm.add(1)
	return AppendResult{SessionID: info.ID, Appended: len(ids), IDs: ids, Version: info.Version}, nil
}

// appendChange stores messages at the end of a thread: the one way every
// tool appends (append_messages, add_turn, the pre-request hook). what
// ends the change's description ("3 messages appended").
func (s *Service) appendChange(th *cached, next *model.Session, nms []model.NewMessage, what string) (*change, []model.ItemID) {
	now := s.clock()
	msgs := make([]model.Message, len(nms))
	heads := make([]model.Head, len(nms))
	ids := make([]model.ItemID, len(nms))
	tokens := 0
	for i, nm := range nms {
		msgs[i] = storedMessage(uint64(next.MessageCount+1+i), nm, now)
		heads[i] = msgs[i].Head()
		ids[i] = msgs[i].ID
		tokens += msgs[i].Tokens
	}
	next.MessageCount += len(msgs)
	next.Tokens += tokens
	return &change{
		what:  plural(len(msgs), "message", "messages") + " " + what,
		store: func(tx *store.Tx) error { return tx.AppendMessages(th.info.ID, msgs) },
		apply: func(th *cached) {
			th.heads = append(th.heads, heads...)
			if th.view != nil {
				th.view = thread.AppendToView(th.view, heads)
			}
		},
		event: Event{Kind: EventAppended},
	}, ids
}

// messageTokens counts what a message sends a model: its parts when it
// has them (tool calls and their inputs, results, text, thinking), else
// its content. Importers render a content from the parts, which would
// count twice.
func messageTokens(content string, rawParts json.RawMessage) int {
	parts := model.DecodeParts(rawParts)
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

// countEach counts the tokens of the n messages at(i) gives that have no
// count yet, on every core. Writes count before they take the service's
// lock: a long message must not hold up every other request.
func countEach(n int, at func(i int) *model.NewMessage) { countEachMetered(n, at, nil) }

// countEachMetered is countEach, telling pm (which may be nil) how many
// messages were counted as it goes.
func countEachMetered(n int, at func(i int) *model.NewMessage, pm *meter) {
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			counted := 0
			for i := w; i < n; i += workers {
				if m := at(i); m.Tokens <= 0 {
					m.Tokens = messageTokens(m.Content, m.Parts)
				}
				// Counted in chunks: a report per message would make
				// the workers queue on the meter's lock.
				if counted++; counted == 64 {
					pm.add(counted)
					counted = 0
				}
			}
			pm.add(counted)
		})
	}
	wg.Wait()
}

// storedMessage completes a new message for storing: seq and ID, time,
// digest and token count.
func storedMessage(seq uint64, nm model.NewMessage, now time.Time) model.Message {
	at := nm.CreatedAt
	if at.IsZero() {
		at = now
	}
	n := nm.Tokens
	if n <= 0 {
		n = messageTokens(nm.Content, nm.Parts)
	}
	return model.Message{
		ID: model.MessageID(seq), Seq: seq, Role: nm.Role, Content: nm.Content, Name: nm.Name,
		Parts: nm.Parts, CreatedAt: at.UTC(), Tokens: n, Meta: nm.Meta,
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

// SearchSessionsArgs are search_sessions' arguments (seed 004).
type SearchSessionsArgs struct {
	Query string `json:"query" jsonschema:"text to look for, case-insensitive, in every session's title and effective thread"`
	Limit *int   `json:"limit,omitempty" jsonschema:"at most this many sessions (default 20, at most 200); total_sessions counts them all"`
}

// SessionSnippet is a message of a session that matched, with the text
// around the match.
type SessionSnippet struct {
	Index     int          `json:"index"`
	ID        model.ItemID `json:"id"`
	Role      model.Role   `json:"role"`
	CreatedAt string       `json:"created_at"`
	Snippet   string       `json:"snippet"`
}

// SessionMatch is a session that matched, and what in it did.
type SessionMatch struct {
	Session SessionOut `json:"session"`
	// Matched says what matched: "title", "content" or both.
	Matched        []string         `json:"matched"`
	ContentMatches int              `json:"content_matches"`
	Snippets       []SessionSnippet `json:"snippets"`
}

// SearchSessionsResult is search_sessions' result.
type SearchSessionsResult struct {
	Query         string         `json:"query"`
	Searched      int            `json:"searched"`
	TotalSessions int            `json:"total_sessions"`
	Sessions      []SessionMatch `json:"sessions"`
}

// searchSnippets is how many matching messages a session shows.
const searchSnippets = 3

// SearchSessions finds the sessions whose title or effective thread
// contains the query: title matches first, then by how many messages
// match, then the most recently updated.
func (s *Service) SearchSessions(_ context.Context, a SearchSessionsArgs) (SearchSessionsResult, error) {
	query := strings.TrimSpace(a.Query)
	if query == "" {
		return SearchSessionsResult{}, invalidf("query is empty: give the text to look for in titles and messages")
	}
	limit := 20
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > 200 {
			return SearchSessionsResult{}, invalidf("limit %d is outside 1..200 (default 20)", *a.Limit)
		}
		limit = *a.Limit
	}
	sessions, err := s.st.Sessions()
	if err != nil {
		return SearchSessionsResult{}, err
	}
	res := SearchSessionsResult{Query: query, Searched: len(sessions), Sessions: []SessionMatch{}}
	title := fuzzy.NewMatcher(query)
	var found []SessionMatch
	for _, x := range sessions {
		snap, err := s.snapshot(x.ID)
		if err != nil {
			return SearchSessionsResult{}, err
		}
		m := SessionMatch{Session: sessionOut(snap.info), Matched: []string{}, Snippets: []SessionSnippet{}}
		if title.Match([]byte(snap.info.Title)) {
			m.Matched = append(m.Matched, "title")
		}
		err = s.st.View(func(tx *store.Tx) error {
			hits, total, err := searchView(tx, snap.view, query, false, searchSnippets)
			if err != nil || total == 0 {
				return err
			}
			m.Matched = append(m.Matched, "content")
			m.ContentMatches = total
			outs, err := messagesOut(tx, snap.view, hits)
			if err != nil {
				return err
			}
			for _, o := range outs {
				m.Snippets = append(m.Snippets, SessionSnippet{
					Index: o.Index, ID: o.ID, Role: o.Role, CreatedAt: o.CreatedAt,
					Snippet: sessSnippet(o.Content, query),
				})
			}
			return nil
		})
		if err != nil {
			return SearchSessionsResult{}, err
		}
		if len(m.Matched) > 0 {
			found = append(found, m)
		}
	}
	// Sessions come most recently updated first; a stable sort keeps
	// that order among equals.
	slices.SortStableFunc(found, func(a, b SessionMatch) int {
		at, bt := a.Matched[0] == "title", b.Matched[0] == "title"
		switch {
		case at != bt && at:
			return -1
		case at != bt:
			return 1
		}
		return b.ContentMatches - a.ContentMatches
	})
	res.TotalSessions = len(found)
	if len(found) > limit {
		found = found[:limit]
	}
	res.Sessions = append(res.Sessions, found...)
	return res, nil
}

// sessSnippet is the text around the first match of query in content,
// on one line, about 160 characters.
func sessSnippet(content, query string) string {
	const around = 70
	lower := strings.ToLower(content)
	i := strings.Index(lower, strings.ToLower(query))
	if i < 0 || len(lower) != len(content) {
		i = 0 // case folding changed lengths: show the start
	}
	start, end := i, i+len(query)
	for k := 0; k < around && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(content[:start])
		start -= size
	}
	for k := 0; k < around && end < len(content); k++ {
		_, size := utf8.DecodeRuneInString(content[end:])
		end += size
	}
	end = min(end, len(content))
	out := strings.Join(strings.Fields(content[start:end]), " ")
	if start > 0 {
		out = "…" + out
	}
	if end < len(content) {
		out += "…"
	}
	return out
}

// SessionHistoryArgs are get_session_history's arguments (seed 004).
type SessionHistoryArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Format    string `json:"format,omitempty" jsonschema:"text (default: one line of time and role per message, then its content), markdown, or json (the messages with IDs, times, tokens and tags)"`
	View      string `json:"view,omitempty" jsonschema:"effective (default: with the operations applied) or raw (the stored messages)"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"only the latest N items (default: all, at most 5000)"`
}

// SessionHistoryResult is get_session_history's result.
type SessionHistoryResult struct {
	Session SessionOut `json:"session"`
	Format  string     `json:"format"`
	View    string     `json:"view"`
	// Total items in the view; Count of them given, from index
	// FirstIndex to the end; LeftOut the earlier ones not given.
	Total      int `json:"total"`
	Count      int `json:"count"`
	FirstIndex int `json:"first_index"`
	LeftOut    int `json:"left_out"`
	// Text for text and markdown; Messages for json.
	Text     string       `json:"text,omitempty"`
	Messages []MessageOut `json:"messages,omitempty"`
	Note     string       `json:"note,omitempty"`
}

// maxHistory bounds the items one get_session_history gives.
const maxHistory = 5000

// GetSessionHistory returns a session's thread, formatted: the latest
// items when it is long.
func (s *Service) GetSessionHistory(_ context.Context, a SessionHistoryArgs) (SessionHistoryResult, error) {
	format, err := formatArg(a.Format, historyFormats...)
	if err != nil {
		if a.Format == "openai" || a.Format == "anthropic" {
			return SessionHistoryResult{}, invalidf("format %q is not text, markdown or json: for the thread as a provider takes it, use assemble_context format=%s", a.Format, a.Format)
		}
		return SessionHistoryResult{}, err
	}
	raw, err := viewArg(a.View)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	limit := 0
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > maxHistory {
			return SessionHistoryResult{}, invalidf("limit %d is outside 1..%d; for more, page through the thread with get_message_range", *a.Limit, maxHistory)
		}
		limit = *a.Limit
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	v := snap.view
	res := SessionHistoryResult{Session: sessionOut(snap.info), Format: format, View: "effective"}
	total := v.Len()
	if raw {
		res.View, total = "raw", snap.info.MessageCount
	}
	count := total
	switch {
	case limit > 0:
		count = min(total, limit)
	case total > maxHistory:
		count = maxHistory
		res.Note = fmt.Sprintf("the thread has %d items; these are the latest %d: page through the rest with get_message_range", total, maxHistory)
	}
	res.Total, res.Count, res.FirstIndex, res.LeftOut = total, count, total-count, total-count
	err = s.st.View(func(tx *store.Tx) error {
		var items []formats.Item
		var outs []MessageOut
		if raw {
			from := uint64(total - count + 1)
			if count > 0 {
				err := tx.Messages(snap.info.ID, from, uint64(total), func(m model.Message) error {
					var tags []string
					if j := v.IndexOfSeq(m.Seq); j >= 0 {
						tags = v.Tags(v.Items[j])
					}
					if format == "json" {
						if tags == nil {
							tags = []string{}
						}
						outs = append(outs, storedOut(int(m.Seq-1), &m, tags))
						return nil
					}
					it := storedItem(&m)
					it.Tags = tags
					items = append(items, it)
					return nil
				})
				if err != nil {
					return err
				}
			}
		} else if format == "json" {
			if outs, err = messagesOut(tx, v, span(total-count, total)); err != nil {
				return err
			}
		} else if items, _, err = textItems(tx, v, span(total-count, total)); err != nil {
			return err
		}
		switch format {
		case "json":
			res.Messages = outs
			if res.Messages == nil {
				res.Messages = []MessageOut{}
			}
		case "markdown":
			var b strings.Builder
			if err := export.WriteMarkdown(&b, snap.info.Title, items); err != nil {
				return err
			}
			res.Text = b.String()
		default:
			res.Text = sessText(v, items, total-count, raw)
		}
		return nil
	})
	if err != nil {
		return SessionHistoryResult{}, err
	}
	return res, nil
}

// sessText is a plain transcript: for each item a line with its index,
// time and role (and, for a summary, what it covers), then its content.
func sessText(v *model.View, items []formats.Item, first int, raw bool) string {
	var b strings.Builder
	for k, it := range items {
		if k > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%d]", first+k)
		if !it.CreatedAt.IsZero() {
			b.WriteString(" " + it.CreatedAt.UTC().Format("2006-01-02 15:04"))
		}
		b.WriteString(" " + string(it.Role))
		if it.Name != "" {
			b.WriteString(" (" + it.Name + ")")
		}
		if it.Synthetic {
			if !raw && it.Summary {
				if i := v.IndexOf(it.ID); i >= 0 {
					sy := &v.Synth[v.Items[i].Synth]
					fmt.Fprintf(&b, " — summary of %s", plural(sy.MessageCount, "message", "messages"))
					if !sy.TimeSpanStart.IsZero() {
						b.WriteString(", " + summary.SpanText(sy.TimeSpanStart, sy.TimeSpanEnd))
					}
				}
			} else {
				fmt.Fprintf(&b, " — by %s %s", it.OpType, it.OpID)
			}
		}
		b.WriteString(":\n")
		b.WriteString(strings.TrimRight(it.Content, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}
