package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"weft/formats/claudecode"
	"weft/formats/export"
	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/ops/fork"
	"weft/ops/memory"
)

// The proxy's engine: a model provider's request passes through weft on
// its way upstream. Its messages are the caller's whole thread, as the
// pre-request hook takes it: the engine reads them (ops.Service's
// ReadThread), recognises the session they continue (its stored
// messages, then new ones, by identity: recognize.go), stores the new
// ones through the service's one write path (SyncPrepare, the hook's
// sync), and gives back the effective thread in the request's own shape,
// to be sent in place of the request's messages (verbatim.go for the
// Messages API: what no operation changed goes as it came; items.go for
// the Responses API). When the answer is
// complete, it is stored too (RecordAnswer).

// API names the provider API a proxied request speaks.
type API string

// The APIs the proxy speaks.
const (
	// Anthropic is the Messages API: {role, content blocks}, the
	// system prompt apart.
	Anthropic API = "anthropic"
	// OpenAI is Chat Completions: {role, content, tool_calls, ...}.
	OpenAI API = "openai"
)

// reader reads the API's list of messages, as that API's importer
// reads them: the OpenAI reader a file of chat-completions messages,
// the Claude Code reader a record's Messages API message (a message of
// tool results becomes a message per result), the Codex reader a
// rollout's response items.
func (api API) reader() (ops.ListReader, error) {
	switch api {
	case OpenAI:
		return ops.ChatMessages, nil
	case Anthropic:
		return anthropicMessages, nil
	case Responses:
		return responsesItems, nil
	}
	return ops.ListReader{}, ops.Invalidf("API %q is not %s, %s or %s", api, Anthropic, OpenAI, Responses)
}

// anthropicMessages reads Messages API messages, marking those with a
// cache breakpoint (the proxy looks for them only there).
var anthropicMessages = ops.ListReader{Shape: "anthropic", Read: readAnthropic, Mark: []byte(`"cache_control"`)}

// readAnthropic reads Messages API messages: a message of tool results
// is a message per result.
func readAnthropic(raw []json.RawMessage, offset, lend int) ([]model.NewMessage, [][]model.Part, []int, error) {
	nms, parts, from, errs := claudecode.ReadMessages(raw, lend)
	if len(errs) > 0 {
		texts := make([]string, len(errs))
		for i, e := range errs {
			texts[i] = fmt.Sprintf("messages[%d]: %s", offset+e.Index, e.Reason)
		}
		return nil, nil, nil, ops.Invalidf("messages are not all Messages API messages ({role: user|assistant|system, content}): %s", strings.Join(texts, "; "))
	}
	return nms, parts, from, nil
}

// Source is the source of the sessions the proxy starts.
const Source = "proxy"

// proxyAuthor is who proxied requests and answers are recorded as made
// by, unless the context names someone.
const proxyAuthor = "proxy"

// Engine is the proxy's engine over one service. What it keeps (the
// sessions it started, by the identity of their first message) is the
// service's, whoever sends the requests: one engine is kept with each
// service (EngineOf).
type Engine struct {
	svc *ops.Service
	// sentLists are what each session's last request sent, to tell a
	// request that breaks the prompt cache's prefix.
	sentLists prefixes
	// fields counts the tokens of the system prompts and tools sent.
	fields fieldTokens

	// mu guards the index of the sessions the proxy started (byFirst,
	// loaded from the file on first use). It is only taken under the
	// service's lock (a write's Find or Apply, or WithLock), never
	// around it: the service's lock first, then the engine's.
	mu      sync.Mutex
	loaded  bool
	byFirst map[model.Ident][]string

	// awaited are the answers on their way, by session and the message
	// count they follow (expectAnswer); awaitHook, when not nil, is
	// called when a request waits for one (the tests order requests
	// with it).
	amu       sync.Mutex
	awaited   map[awaitKey][]chan struct{}
	awaitHook func(sessionID string)
}

// awaitKey is where an answer on its way will be stored: the session,
// and the message count it follows.
type awaitKey struct {
	sessionID string
	after     int
}

// answerWait bounds how long a request waits for the answer before it
// to be stored.
const answerWait = 10 * time.Second

// expectAnswer says that the answer to turn is on its way, until release
// is called (once it is stored, or will not be). A request that sends
// that answer back meanwhile (a client on a keep-alive connection sends
// its next turn as soon as it has the answer, perhaps before weft has
// stored it) waits for it: the answer is stored as the model gave it,
// with its meta, not as the client's copy.
func (e *Engine) expectAnswer(turn *Turn) (release func()) {
	if turn.SessionID == "" {
		return func() {}
	}
	k, done := awaitKey{turn.SessionID, turn.Stored}, make(chan struct{})
	e.amu.Lock()
	if e.awaited == nil {
		e.awaited = map[awaitKey][]chan struct{}{}
	}
	e.awaited[k] = append(e.awaited[k], done)
	e.amu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.amu.Lock()
			defer e.amu.Unlock()
			e.awaited[k] = slices.DeleteFunc(e.awaited[k], func(c chan struct{}) bool { return c == done })
			if len(e.awaited[k]) == 0 {
				delete(e.awaited, k)
			}
			close(done)
		})
	}
}

// awaitAnswer waits (up to answerWait, or while ctx lasts) for the
// answers on their way to session sid after its stored messages, and
// reports whether there were any.
func (e *Engine) awaitAnswer(ctx context.Context, sid string, stored int) bool {
	e.amu.Lock()
	waits := slices.Clone(e.awaited[awaitKey{sid, stored}])
	e.amu.Unlock()
	if len(waits) == 0 {
		return false
	}
	if e.awaitHook != nil {
		e.awaitHook(sid)
	}
	timer := time.NewTimer(answerWait)
	defer timer.Stop()
	for _, done := range waits {
		select {
		case <-done:
		case <-timer.C:
			return true
		case <-ctx.Done():
			return true
		}
	}
	return true
}

// engineKey keeps the engine with its service (ops.Service.Keep).
type engineKey struct{}

// EngineOf returns the engine of svc, made on first use.
func EngineOf(svc *ops.Service) *Engine {
	return svc.Keep(engineKey{}, func() any { return &Engine{svc: svc} }).(*Engine)
}

// Request is a provider request's thread, as the proxy hands it to
// the engine.
type Request struct {
	API API
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
	// Lend, when above 0, says the bytes of Messages are the engine's
	// to keep (they serve no other request): a block of Lend bytes or
	// more is kept where it lies, not copied (formats.KeepParts), so a
	// tool result of megabytes is in memory once as it was sent, and
	// once as its text. The handler sets it (lendOf).
	Lend int
}

// Turn is what the proxy sends upstream in place of a request's
// messages, and what the request did to the session.
type Turn struct {
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
	// the answer follows it (Answer.After). The write may find the
	// session changed meanwhile: Wait says where it went.
	Stored  int
	Version uint64
	// Resent says the request sends again the first of the session's
	// messages (a retry, a regenerate, samples from one prefix): the
	// session holds more after them, so nothing of the request is
	// stored, nor its answer.
	Resent bool
	// Unchanged says the effective thread is the request's messages
	// themselves (no operation changes the thread): send them as they
	// came, byte for byte. Otherwise the thread is Anthropic's (a
	// summary, also one that opens the thread, a system turn: the
	// request's system prompt goes as it came), OpenAI's, or the
	// Responses API's input items, as the request's API.
	Unchanged bool
	Anthropic *export.AnthropicBody
	OpenAI    []export.OpenAIMessage
	Responses []ResponsesItem
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

	// anSegs, when not nil, is the Messages API thread in stretches:
	// the request's messages that go as they came (asIs, by index), and
	// those of Anthropic.Messages written anew (verbatim.go).
	anSegs []anSeg
	asIs   []bool

	write *proxyWrite
	// compacts: storing the request takes its session past its memory
	// policy (Take waits for the check, and sends the thread after it).
	compacts bool
	// Parts is the thread sent, by part (its summaries, turns and tool
	// outputs; the handler adds the system prompt and the tools).
	Parts ops.SentParts
}

// Take takes a provider request's thread: it recognises the session the
// messages continue (or starts one, titled from the first user
// message), and returns the effective thread to send upstream in their
// place: the session's, and the new messages after it. The new messages
// are stored meanwhile, in one write whose event says the request's raw
// → sent tokens: the request need not wait for the disk (Wait waits for
// it). A refused request (messages that are no thread) stores nothing.
func (e *Engine) Take(ctx context.Context, r Request) (Turn, error) {
	turn, err := e.take(ctx, r)
	if err != nil || !turn.compacts {
		return turn, err
	}
	// The request takes its session past its memory policy: it waits
	// for its messages to be stored and the policy's check made (the
	// service's after-append), then goes upstream as the thread is now,
	// within the policy. Only such a request waits; the model's
	// summaries never: where one is not written yet, the extractive one
	// stands in.
	st, err := turn.Wait()
	if err != nil {
		return turn, nil // the handler says why it was not stored
	}
	again, err := e.take(ctx, Request{API: r.API, Session: st.SessionID, Messages: r.Messages})
	if err != nil || again.Resent {
		return turn, nil
	}
	again.Created, again.Recognized, again.Appended, again.write = turn.Created, turn.Recognized, turn.Appended, turn.write
	return again, nil
}

// take is Take without the wait of a request that crosses its policy.
func (e *Engine) take(ctx context.Context, r Request) (Turn, error) {
	if len(r.Messages) == 0 {
		return Turn{}, ops.Invalidf("%s is empty: a request sends the whole conversation, oldest first", r.API.ListField())
	}
	reader, err := r.API.reader()
	if err != nil {
		return Turn{}, err
	}
	svc := e.svc
	msgs, marked, places, err := svc.ReadThread(reader, r.Messages, r.Lend)
	if err != nil {
		return Turn{}, err
	}
	if len(msgs) == 0 {
		return Turn{}, ops.Invalidf("messages hold nothing: every message is empty")
	}
	var c *ops.Thread
	var title string
	var snap ops.Snapshot
	resent := false
	for waited := false; ; waited = true {
		err = svc.WithLock(func(l ops.Locked) error {
			var err error
			c, title, err = e.match(l, r.Session, msgs, true)
			snap, resent = ops.Snapshot{}, false
			if c != nil {
				snap = ops.Snapshot{Info: c.Info, View: c.View(), Heads: c.Heads, Ops: c.Ops}
				if n := len(msgs); c.Info.MessageCount > n {
					// The request sends again the session's first
					// messages: the thread sent is the session's view
					// of them, and nothing is new.
					snap.View, snap.Info.Tokens = c.ViewOf(n)
					snap.Info.MessageCount, resent = n, true
				}
			}
			return err
		})
		if err != nil {
			return Turn{}, err
		}
		// The request sends back an answer that is on its way to the
		// store: it is stored first, as the model gave it.
		if n := snap.Info.MessageCount; waited || r.Probe || c == nil || n >= len(msgs) || msgs[n].Message.Role != model.RoleAssistant ||
			!e.awaitAnswer(ctx, snap.Info.ID, n) {
			break
		}
	}
	known := snap.Info.MessageCount
	fresh := msgs[known:]
	if err := ops.CheckNewMessages(len(fresh)); err != nil {
		return Turn{}, err
	}
	ops.CountCallerMessages(fresh)
	if !r.Probe && c == nil {
		snap.Info = e.newSession(title)
	}
	turn, err := e.proxyThread(r.API, snap, msgs, places, resent)
	if err != nil {
		return Turn{}, err
	}
	turn.Resent = resent
	turn.CacheMarked = marked
	turn.Parts = threadParts(snap, msgs)
	if r.Probe {
		return turn, nil
	}
	turn.Created, turn.Recognized, turn.Appended, turn.Stored = c == nil, known, len(fresh), len(msgs)
	if len(fresh) == 0 {
		svc.CountRequest(turn.SessionID, turn.RawTokens, turn.SentTokens)
		return turn, nil // nothing new: nothing to write
	}
	if turn.compacts, err = e.compacts(snap, c == nil, fresh); err != nil {
		return Turn{}, err
	}
	turn.write = &proxyWrite{done: make(chan struct{})}
	go func() {
		defer close(turn.write.done)
		ctx := context.WithoutCancel(ops.WithDefaultAuthor(ctx, proxyAuthor))
		turn.write.stored, turn.write.err = e.store(ctx, r.Session, msgs, snap.Info, c != nil, turn)
	}()
	return turn, nil
}

// compacts reports whether storing fresh takes the session snap shows
// (a new one, if created) past its memory policy (one the file gives the
// sessions the proxy starts, for a new one).
func (e *Engine) compacts(snap ops.Snapshot, created bool, fresh []ops.CallerMessage) (bool, error) {
	if created {
		file, proxied, err := e.svc.DefaultPolicies()
		if err != nil {
			return false, err
		}
		snap.Info.Memory = cmp.Or(proxied, file)
	}
	if snap.Info.Memory == nil {
		return false, nil
	}
	return memory.WouldAct(e.svc, snap, fresh)
}

// newSession is the record of a session the proxy starts now.
func (e *Engine) newSession(title string) model.Session {
	now := e.svc.Clock()
	return model.Session{ID: e.svc.NewID(now), Title: title, CreatedAt: now, Source: Source}
}

// proxyWrite is a proxied request's write, under way.
type proxyWrite struct {
	done   chan struct{}
	stored Stored
	err    error
}

// Stored is where a proxied request's messages were stored.
type Stored struct {
	SessionID string
	// Stored is the session's message count once they were: the answer
	// follows it (Answer.After).
	Stored int
}

// Wait waits until the request's new messages are stored, and says
// where (or why they were not). A probe has nothing to wait for.
func (t *Turn) Wait() (Stored, error) {
	if t.write == nil {
		return Stored{SessionID: t.SessionID, Stored: t.Stored}, nil
	}
	<-t.write.done
	return t.write.stored, t.write.err
}

// store stores a proxied request's new messages through the service's
// write path: in the session planned (info; made now, unless existing),
// or, if a write since means the messages no longer continue it, in the
// one they continue then.
func (e *Engine) store(ctx context.Context, ref string, msgs []ops.CallerMessage, info model.Session, existing bool, turn Turn) (Stored, error) {
	req := &ops.WriteReq{Proxied: true}
	var carried []model.Op // a fork's, from the session it departs from
	req.Find = func(l ops.Locked) (*ops.Thread, error) {
		if existing {
			if c, err := l.Thread(info.ID); err == nil {
				if ok, err := continues(l, c, msgs); ok || err != nil {
					return c, err
				}
			}
		}
		// The index was read again for the request (Take) when the
		// store is shared; a session planned that no longer takes the
		// messages (existing) is what reads it again here.
		c, title, err := e.match(l, ref, msgs, existing)
		if err != nil || c != nil {
			return c, err
		}
		req.Created = true
		if existing {
			info = e.newSession(title)
		}
		// Departing from a session of the proxy's in the middle (the
		// agent rewound): the new path is a fork of the old one.
		src, shared, err := e.departure(l, msgs)
		if err != nil {
			return nil, err
		}
		carried = nil
		if src != nil {
			info.ForkOf = forkOf(src, shared)
			info.ActiveTags, info.Memory = slices.Clone(src.Info.ActiveTags), src.Info.Memory
			carried = fork.CarryOps(e.svc, src.Ops, shared)
		}
		return &ops.Thread{Info: info}, nil
	}
	sync := e.svc.SyncPrepare(msgs, nil, func(c *ops.Thread, next *model.Session, ch *ops.Change) {
		added := next.MessageCount - c.Info.MessageCount
		sent := c.View().Tokens + next.Tokens - c.Info.Tokens
		ch.What = fmt.Sprintf("request: %s new, %s → %s tokens sent", english.Count(added, "message"), english.Thousands(next.Tokens), english.Thousands(sent))
		first, created := msgs[0].Identity, req.Created
		stored := ch.Apply
		ch.Apply = func(c *ops.Thread) {
			stored(c)
			if created {
				e.started(first, c.Info.ID)
			}
		}
		if created {
			ch.CarryOps(next, carried)
		}
	})
	req.Prepare = sync.Unless(func(c *ops.Thread) bool {
		// The session holds them and more since (Find saw them): the
		// same request, sent again at once.
		return len(msgs) < c.Info.MessageCount
	})
	if err := e.svc.CommitAll(ctx, []*ops.WriteReq{req}); err != nil {
		return Stored{}, err
	}
	turn.SessionID = req.Session().ID
	if !turn.compacts {
		// A request that compacts is counted as it is sent, after.
		e.svc.CountRequest(turn.SessionID, turn.RawTokens, turn.SentTokens)
	}
	return Stored{SessionID: turn.SessionID, Stored: len(msgs)}, nil
}

// proxyThread builds what goes upstream for msgs, a request's thread
// that continues snap's session (msgs past its stored messages are new,
// and not stored: a probe). A request resent is the view of the first
// of the session's messages: the head the session keeps is not its.
func (e *Engine) proxyThread(api API, snap ops.Snapshot, msgs []ops.CallerMessage, places ops.Places, resent bool) (Turn, error) {
	turn := Turn{SessionID: snap.Info.ID, Stored: snap.Info.MessageCount, Version: snap.Info.Version, Unchanged: true}
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
	if api == Anthropic || api == OpenAI {
		if p, ok := planVerbatim(v, snap.Info.MessageCount, msgs, places); ok {
			if api == Anthropic {
				verbatimTurn(&turn, p)
			} else {
				verbatimChatTurn(&turn, p)
			}
			return turn, nil
		}
	}
	items, err := e.effectiveItems(v, snap.Info.MessageCount, msgs)
	if err != nil {
		return Turn{}, err
	}
	var rep export.Report
	switch api {
	case Anthropic:
		// The session holds messages the request does not send: the
		// thread is written anew whole.
		body, r := export.AnthropicWith(items, export.AnthropicOptions{SystemTurns: true, PromptApart: true})
		turn.Anthropic, rep, turn.anSegs = &body, r, []anSeg{{raw: -1, n: len(body.Messages)}}
	case Responses:
		turn.Responses, rep.Folded = responsesThread(items, len(msgs))
	default:
		turn.OpenAI, rep = export.OpenAI(items)
		turn.anSegs = []anSeg{{raw: -1, n: len(turn.OpenAI)}}
	}
	turn.Adjustments = rep.Folded
	return turn, nil
}

// Answer is a model's complete answer to a proxied request.
type Answer struct {
	API       API
	SessionID string
	// After is the session's message count the answer follows
	// (Turn.Stored): an answer to a request that is no longer the
	// last is not stored.
	After int
	// Message is the assistant's message in the API's shape: a Messages
	// API message ({role, content}), a chat-completions one ({role,
	// content, tool_calls}), or a response's output items (a list).
	Message json.RawMessage
	// Model is the model that answered, kept in the message's meta.
	Model string
}

// AnswerResult says what RecordAnswer stored.
type AnswerResult struct {
	IDs     []model.ItemID
	Version uint64
}

// RecordAnswer stores a model's complete answer at the end of the
// session its request went to, in one write, if nothing was stored there
// since the request (else it is refused as a conflict). An empty answer
// stores nothing.
func (e *Engine) RecordAnswer(ctx context.Context, a Answer) (AnswerResult, error) {
	if a.SessionID == "" {
		return AnswerResult{}, ops.Invalidf("the answer names no session")
	}
	list, err := answerList(a)
	if err != nil {
		return AnswerResult{}, err
	}
	reader, err := a.API.reader()
	if err != nil {
		return AnswerResult{}, err
	}
	msgs, _, err := reader.List(list, 0, 0)
	if err != nil {
		return AnswerResult{}, err
	}
	if len(msgs) == 0 {
		return AnswerResult{}, nil
	}
	ops.CountCallerMessages(msgs)
	for i, m := range msgs {
		if m.Message.Role != model.RoleAssistant {
			return AnswerResult{}, ops.Invalidf("the answer is a %s message, not the assistant's", m.Message.Role)
		}
		if a.Model != "" {
			msgs[i].Message.Meta = map[string]string{"model": a.Model}
		}
	}
	var res AnswerResult
	info, err := e.svc.Write(ops.WithDefaultAuthor(ctx, proxyAuthor), a.SessionID, nil, ops.PrepareCached(func(c *ops.Thread, next *model.Session) (*ops.Change, error) {
		n := c.Info.MessageCount
		if n != a.After {
			return nil, ops.Conflictf("session %s has %d messages, not the %d the answer follows: its request is no longer the last, so the answer is not stored", c.Info.ID, n, a.After)
		}
		var ch *ops.Change
		ch, res.IDs = e.svc.AppendRead(c, next, msgs, "")
		ch.What = "the model's answer stored"
		return ch, nil
	}))
	if err != nil {
		return AnswerResult{}, err
	}
	res.Version = info.Version
	return res, nil
}
