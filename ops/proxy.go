package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"weft/formats"
	"weft/formats/codex"
	"weft/formats/export"
	"weft/internal/english"
	"weft/model"
	"weft/store"
)

// The context proxy's side of the service: a model provider's request
// passes through weft on its way upstream. Its messages are the caller's
// whole thread, as the pre-request hook takes it: weft recognises the
// session they continue (its stored messages, then new ones, by
// identity), stores the new ones through the one write path, and gives
// back the effective thread in the request's own shape, to be sent in
// place of the request's messages. When the answer is complete, it is
// stored too (RecordProxyAnswer).

// ProxyAPI names the provider API a proxied request speaks.
type ProxyAPI string

// The APIs the proxy speaks.
const (
	// ProxyAnthropic is the Messages API: {role, content blocks}, the
	// system prompt apart.
	ProxyAnthropic ProxyAPI = "anthropic"
	// ProxyOpenAI is Chat Completions: {role, content, tool_calls, ...}.
	ProxyOpenAI ProxyAPI = "openai"
)

// ProxySource is the source of the sessions the proxy starts.
const ProxySource = "proxy"

// proxyAuthor is who proxied requests and answers are recorded as made
// by, unless the context names someone.
const proxyAuthor = "proxy"

// ProxyRequest is a provider request's thread, as the proxy hands it to
// the service.
type ProxyRequest struct {
	API ProxyAPI
	// Session names the session the client asked for (an ID, a unique ID
	// prefix or a title); "" recognises it from the messages. A named
	// session that is not there is made, with that title; one the
	// messages do not continue is passed over, as if none was named.
	Session string
	// Messages are the request's "messages" (the Responses API's
	// "input" items), as sent.
	Messages []json.RawMessage
	// Probe recognises the session and builds the thread but stores
	// nothing (a token count).
	Probe bool
}

// ProxyTurn is what the proxy sends upstream in place of a request's
// messages, and what the request did to the session.
type ProxyTurn struct {
	// SessionID is the session the request continues ("" for a probe
	// that continues none); Created says the request started it.
	SessionID string
	Created   bool
	// Recognized counts the request's messages (as stored: a Messages
	// API message of tool results is one message per result) found
	// stored already, Appended those stored now.
	Recognized int
	Appended   int
	// Stored is the session's message count once the request is stored:
	// the answer follows it (ProxyAnswer.After). The write may find the
	// session changed meanwhile: Wait says where it went.
	Stored  int
	Version uint64
	// Unchanged says the effective thread is the request's messages
	// themselves (no operation changes the thread): send them as they
	// came, byte for byte. Otherwise the thread is Anthropic's (its
	// System holds the summaries that open the thread, if any),
	// OpenAI's, or the Responses API's input items, as the request's
	// API.
	Unchanged bool
	Anthropic *export.AnthropicBody
	OpenAI    []export.OpenAIMessage
	Responses []ResponsesItem
	// AnthropicHead, when not nil, is the start of the Messages API
	// thread, exported and encoded once for the session's requests that
	// share it: the thread is its messages, then Anthropic.Messages.
	AnthropicHead *export.AnthropicHead
	// Adjustments say what the provider's shape required (a call whose
	// result an operation removed, folded into text).
	Adjustments []string
	// RawTokens are the tokens of the request's messages, SentTokens
	// those of the thread sent in their place (weft's count).
	RawTokens  int
	SentTokens int
	// CacheMarked are the request's messages (indices of its list) that
	// carry the Messages API's cache breakpoints (cache_control).
	CacheMarked []int

	write *proxyWrite
}

// ProxyStats describe a session's proxied requests since this weft
// started (list_sessions).
type ProxyStats struct {
	Requests int `json:"requests"`
	// RawTokens → SentTokens: the last request's messages, and the
	// effective thread sent in their place.
	RawTokens  int    `json:"raw_tokens"`
	SentTokens int    `json:"sent_tokens"`
	LastAt     string `json:"last_at"`
}

// proxyState is what the service keeps for the proxy, under its lock:
// the sessions it started, by the identity of their first message (a
// request continues one of those), loaded from the file on first use;
// and each session's last request.
type proxyState struct {
	memo    threadMemo
	heads   proxyHeads
	loaded  bool
	byFirst map[model.Ident][]string
	stats   map[string]ProxyStats
}

// ProxyRequest takes a provider request's thread: it recognises the
// session the messages continue (or starts one, titled from the first
// user message), and returns the effective thread to send upstream in
// their place: the session's, and the new messages after it. The new
// messages are stored meanwhile, in one write whose event says the
// request's raw → sent tokens: the request need not wait for the disk
// (Wait waits for it). A refused request (messages that are no thread)
// stores nothing.
func (s *Service) ProxyRequest(ctx context.Context, r ProxyRequest) (ProxyTurn, error) {
	if len(r.Messages) == 0 {
		return ProxyTurn{}, Invalidf("%s is empty: a request sends the whole conversation, oldest first", r.API.ListField())
	}
	msgs, marked, places, err := s.readThreadAt(r.API, r.Messages)
	if err != nil {
		return ProxyTurn{}, err
	}
	if len(msgs) == 0 {
		return ProxyTurn{}, Invalidf("messages hold nothing: every message is empty")
	}
	s.mu.Lock()
	c, title, err := s.proxyMatchLocked(r.Session, msgs)
	var snap Snapshot
	if c != nil {
		snap = Snapshot{Info: c.Info, View: c.View()}
	}
	s.mu.Unlock()
	if err != nil {
		return ProxyTurn{}, err
	}
	known := snap.Info.MessageCount
	fresh := msgs[known:]
	if len(fresh) > maxAppend {
		return ProxyTurn{}, Invalidf("%d new messages in one request is more than %d; store the older ones first with append_messages", len(fresh), maxAppend)
	}
	CountEach(len(fresh), func(i int) *model.NewMessage { return &fresh[i].Message })
	if !r.Probe && c == nil {
		now := s.Clock()
		snap.Info = model.Session{ID: s.ids.next(now), Title: title, CreatedAt: now, Source: ProxySource}
	}
	turn, err := s.proxyThread(r.API, snap, msgs, places)
	if err != nil {
		return ProxyTurn{}, err
	}
	turn.CacheMarked = marked
	if r.Probe {
		return turn, nil
	}
	turn.Created, turn.Recognized, turn.Appended, turn.Stored = c == nil, known, len(fresh), len(msgs)
	if len(fresh) == 0 {
		s.countProxied(turn)
		return turn, nil // nothing new: nothing to write
	}
	turn.write = &proxyWrite{done: make(chan struct{})}
	go func() {
		defer close(turn.write.done)
		turn.write.stored, turn.write.err = s.storeProxied(context.WithoutCancel(proxyContext(ctx)), r.Session, msgs, snap.Info, c != nil, turn)
	}()
	return turn, nil
}

// proxyWrite is a proxied request's write, under way.
type proxyWrite struct {
	done   chan struct{}
	stored ProxyStored
	err    error
}

// ProxyStored is where a proxied request's messages were stored.
type ProxyStored struct {
	SessionID string
	// Stored is the session's message count once they were: the answer
	// follows it (ProxyAnswer.After).
	Stored int
}

// Wait waits until the request's new messages are stored, and says
// where (or why they were not). A probe has nothing to wait for.
func (t *ProxyTurn) Wait() (ProxyStored, error) {
	if t.write == nil {
		return ProxyStored{SessionID: t.SessionID, Stored: t.Stored}, nil
	}
	<-t.write.done
	return t.write.stored, t.write.err
}

// storeProxied stores a proxied request's new messages: in the session
// planned (info; made now, unless existing), or, if a write since means
// the messages no longer continue it, in the one they continue then.
func (s *Service) storeProxied(ctx context.Context, ref string, msgs []CallerMessage, info model.Session, existing bool, turn ProxyTurn) (ProxyStored, error) {
	var sync SyncResult
	req := &WriteReq{}
	req.Find = func(l Locked) (*Thread, error) {
		if existing {
			if c, err := s.threadLocked(info.ID); err == nil {
				if ok, err := s.continuesLocked(c, msgs); ok || err != nil {
					return c, err
				}
			}
		}
		c, title, err := s.proxyMatchLocked(ref, msgs)
		if err != nil || c != nil {
			return c, err
		}
		req.Created = true
		if existing {
			now := s.Clock()
			info = model.Session{ID: s.ids.next(now), Title: title, CreatedAt: now, Source: ProxySource}
		}
		return &Thread{Info: info}, nil
	}
	req.Prepare = s.SyncPrepare(msgs, &sync, func(c *Thread, next *model.Session, ch *Change) {
		added := next.MessageCount - c.Info.MessageCount
		sent := c.View().Tokens + next.Tokens - c.Info.Tokens
		ch.What = fmt.Sprintf("request: %s new, %s → %s tokens sent", english.Count(added, "message"), english.Thousands(next.Tokens), english.Thousands(sent))
		first, created := msgs[0].Identity, req.Created
		stored := ch.Apply
		ch.Apply = func(c *Thread) {
			stored(c)
			if created && s.proxy.loaded {
				s.proxy.byFirst[first] = append(s.proxy.byFirst[first], c.Info.ID)
			}
		}
	})
	if err := s.CommitAll(ctx, []*WriteReq{req}); err != nil {
		return ProxyStored{}, err
	}
	turn.SessionID = req.Session().ID
	s.countProxied(turn)
	return ProxyStored{SessionID: turn.SessionID, Stored: len(msgs)}, nil
}

// countProxied counts a request in its session's stats.
func (s *Service) countProxied(turn ProxyTurn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxy.stats == nil {
		s.proxy.stats = map[string]ProxyStats{}
	}
	st := s.proxy.stats[turn.SessionID]
	st.Requests++
	st.RawTokens, st.SentTokens, st.LastAt = turn.RawTokens, turn.SentTokens, FormatTime(s.Clock())
	s.proxy.stats[turn.SessionID] = st
}

// proxyContext records a write as the proxy's unless the face named
// someone.
func proxyContext(ctx context.Context) context.Context {
	if _, ok := ctx.Value(authorKey{}).(string); ok {
		return ctx
	}
	return WithAuthor(ctx, proxyAuthor)
}

// proxyMatchLocked finds the session msgs continue: the one named, if
// the messages continue it; else the proxy's session they continue
// furthest (the most recently updated of equals). It returns nil and
// the title a new session takes when there is none, or an error when
// the name is ambiguous.
func (s *Service) proxyMatchLocked(ref string, msgs []CallerMessage) (*Thread, string, error) {
	if ref != "" {
		id, err := s.resolveLocked(ref)
		switch {
		case errors.Is(err, ErrNotFound):
			// Named, and not there yet: the request starts it.
			title, err := ValidTitle(ref)
			return nil, title, err
		case err != nil:
			return nil, "", err
		default:
			c, err := s.threadLocked(id)
			if err != nil {
				return nil, "", err
			}
			ok, err := s.continuesLocked(c, msgs)
			if ok || err != nil {
				return c, "", err
			}
		}
	}
	if err := s.loadProxyIndexLocked(); err != nil {
		return nil, "", err
	}
	first := msgs[0].Identity
	var best *Thread
	ids := s.proxy.byFirst[first]
	for k := 0; k < len(ids); k++ {
		c, err := s.threadLocked(ids[k])
		if errors.Is(err, ErrNotFound) { // deleted since
			ids = slices.Delete(ids, k, k+1)
			s.proxy.byFirst[first] = ids
			k--
			continue
		}
		if err != nil {
			return nil, "", err
		}
		n := c.Info.MessageCount
		if best != nil && (n < best.Info.MessageCount || n == best.Info.MessageCount && !c.Info.UpdatedAt.After(best.Info.UpdatedAt)) {
			continue
		}
		ok, err := s.continuesLocked(c, msgs)
		if err != nil {
			return nil, "", err
		}
		if ok && n > 0 {
			best = c
		}
	}
	if best != nil {
		return best, "", nil
	}
	return nil, proxyTitle(msgs), nil
}

// continuesLocked reports whether msgs are c's stored messages, then
// perhaps more.
func (s *Service) continuesLocked(c *Thread, msgs []CallerMessage) (bool, error) {
	n := c.Info.MessageCount
	if n > len(msgs) {
		return false, nil
	}
	var ids []model.Ident
	err := s.st.View(func(tx *store.Tx) error {
		var err error
		ids, err = c.Identities(tx, n)
		return err
	})
	if err != nil {
		return false, err
	}
	for i, id := range ids {
		if msgs[i].Identity != id {
			return false, nil
		}
	}
	return true, nil
}

// loadProxyIndexLocked reads, once, which sessions the proxy started,
// by the identity of their first message.
func (s *Service) loadProxyIndexLocked() error {
	if s.proxy.loaded {
		return nil
	}
	index := map[model.Ident][]string{}
	err := s.st.View(func(tx *store.Tx) error {
		sessions, _ := tx.AllSessions() // a damaged record is no session to continue
		for _, x := range sessions {
			if x.Source != ProxySource || x.MessageCount == 0 {
				continue
			}
			m, err := tx.Message(x.ID, 1)
			if err != nil {
				continue // unreadable: it cannot be continued either
			}
			id := model.Identity(m.Role, m.Content, model.DecodeParts(m.Parts))
			index[id] = append(index[id], x.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.proxy.byFirst, s.proxy.loaded = index, true
	return nil
}

// proxyTitle is a new session's title: the first line of what the user
// first wrote, passing over the blocks an agent adds in tags
// (<system-reminder>, <command-name>) and the context Codex CLI adds
// (# AGENTS.md instructions).
func proxyTitle(msgs []CallerMessage) string {
	fallback := ""
	for _, m := range msgs {
		if m.Message.Role != model.RoleUser {
			continue
		}
		texts := []string{m.Message.Content}
		if len(m.Parts) > 0 {
			texts = texts[:0]
			for _, p := range m.Parts {
				if p.Type == model.PartText {
					texts = append(texts, p.Text)
				}
			}
		}
		for _, t := range texts {
			t = strings.TrimSpace(t)
			switch {
			case t == "":
			case strings.HasPrefix(t, "<") || codex.Injected(t):
				if fallback == "" {
					fallback = t
				}
			default:
				return formats.CutTitle(t)
			}
		}
	}
	if fallback != "" {
		return formats.CutTitle(fallback)
	}
	return "conversation through the proxy"
}

// proxyThread builds what goes upstream for msgs, a request's thread
// that continues snap's session (msgs past its stored messages are new,
// and not stored: a probe).
func (s *Service) proxyThread(api ProxyAPI, snap Snapshot, msgs []CallerMessage, places Places) (ProxyTurn, error) {
	turn := ProxyTurn{SessionID: snap.Info.ID, Stored: snap.Info.MessageCount, Version: snap.Info.Version, Unchanged: true}
	v := snap.View
	extra := msgs[snap.Info.MessageCount:]
	for _, m := range extra {
		turn.RawTokens += m.Message.Tokens
	}
	turn.SentTokens = turn.RawTokens
	if v == nil {
		return turn, nil
	}
	turn.RawTokens += snap.Info.Tokens
	turn.SentTokens += v.Tokens
	if v.Len() == snap.Info.MessageCount {
		for i, it := range v.Items {
			if it.Seq != uint64(i+1) {
				turn.Unchanged = false
				break
			}
		}
	} else {
		turn.Unchanged = false
	}
	if turn.Unchanged {
		return turn, nil
	}
	if api == ProxyAnthropic {
		if err := s.anthropicTurn(&turn, snap.Info.ID, v, snap.Info.MessageCount, msgs, places); err != nil {
			return ProxyTurn{}, err
		}
		return turn, nil
	}
	items, err := s.effectiveItems(v, snap.Info.MessageCount, msgs)
	if err != nil {
		return ProxyTurn{}, err
	}
	var rep export.Report
	switch api {
	case ProxyResponses:
		turn.Responses, rep.Folded = responsesThread(items, len(msgs))
	default:
		turn.OpenAI, rep = export.OpenAI(items)
	}
	turn.Adjustments = rep.Folded
	return turn, nil
}

// ProxyAnswer is a model's complete answer to a proxied request.
type ProxyAnswer struct {
	API       ProxyAPI
	SessionID string
	// After is the session's message count the answer follows
	// (ProxyTurn.Stored): an answer to a request that is no longer the
	// last is not stored.
	After int
	// Message is the assistant's message in the API's shape: a Messages
	// API message ({role, content}), a chat-completions one ({role,
	// content, tool_calls}), or a response's output items (a list).
	Message json.RawMessage
	// Model is the model that answered, kept in the message's meta.
	Model string
}

// ProxyAnswerResult says what RecordProxyAnswer stored.
type ProxyAnswerResult struct {
	IDs     []model.ItemID
	Version uint64
}

// RecordProxyAnswer stores a model's complete answer at the end of the
// session its request went to, in one write, if nothing was stored there
// since the request (else it is refused as a conflict). An empty answer
// stores nothing.
func (s *Service) RecordProxyAnswer(ctx context.Context, a ProxyAnswer) (ProxyAnswerResult, error) {
	if a.SessionID == "" {
		return ProxyAnswerResult{}, Invalidf("the answer names no session")
	}
	list, err := answerList(a)
	if err != nil {
		return ProxyAnswerResult{}, err
	}
	msgs, _, err := readList(a.API, list, 0)
	if err != nil {
		return ProxyAnswerResult{}, err
	}
	if len(msgs) == 0 {
		return ProxyAnswerResult{}, nil
	}
	CountEach(len(msgs), func(i int) *model.NewMessage { return &msgs[i].Message })
	for i, m := range msgs {
		if m.Message.Role != model.RoleAssistant {
			return ProxyAnswerResult{}, Invalidf("the answer is a %s message, not the assistant's", m.Message.Role)
		}
		if a.Model != "" {
			msgs[i].Message.Meta = map[string]string{"model": a.Model}
		}
	}
	var res ProxyAnswerResult
	info, err := s.Write(proxyContext(ctx), a.SessionID, nil, func(_ *store.Tx, c *Thread, next *model.Session) (*Change, error) {
		n := c.Info.MessageCount
		if n != a.After {
			return nil, Conflictf("session %s has %d messages, not the %d the answer follows: its request is no longer the last, so the answer is not stored", c.Info.ID, n, a.After)
		}
		var ch *Change
		ch, res.IDs = s.AppendRead(c, next, msgs, "")
		ch.What = "the model's answer stored"
		return ch, nil
	})
	if err != nil {
		return ProxyAnswerResult{}, err
	}
	res.Version = info.Version
	return res, nil
}

// ProxyStatsOf returns a session's proxied requests since this weft
// started, or nil when it had none.
func (s *Service) ProxyStatsOf(sessionID string) *ProxyStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.proxy.stats[sessionID]
	if !ok {
		return nil
	}
	return &st
}
