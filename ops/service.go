package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"weft/model"
	"weft/ops/summary"
	"weft/ops/thread"
	"weft/store"
)

// Service is the one API every face of weft calls: the TUI, the CLI, the
// MCP server and the HTTP API. It validates every request against the
// current view before writing, makes each write one store transaction,
// and publishes an event after it.
type Service struct {
	st store.Store
	// shared: other processes write the store too (store.Shared), so a
	// write checks the cached session is the stored one first.
	shared bool
	// instance names this service among the wefts on a shared store.
	instance string
	now      func() time.Time
	ids      idGen
	bus      bus
	// endpoint is where summaries may be asked for (WithSummaryEndpoint).
	endpoint summary.Endpoint
	logger   *slog.Logger

	mu             sync.Mutex
	threads        map[string]*Thread
	defaultSession string // for requests that name none (SetDefaultSession)
	afterAppend    func(ctx context.Context, s *Service, sessionID string)
	latest         string // most recently updated session, once known
	// memo remembers the callers' messages read (ReadThread).
	memo threadMemo
	// requests are the proxied requests of each session (CountRequest).
	requests map[string]ProxyStats

	// kept is what packages above the service keep with it (Keep).
	kept sync.Map
}

// Thread is the state of one session the service keeps in memory. Stored messages are
// represented by their heads only; bodies stay in the store.
type Thread struct {
	// idents are the identities of the first stored messages, as the
	// pre-request hook has needed them (stored messages never change).
	idents []model.Ident

	Info  model.Session
	Heads []model.Head
	Ops   []model.Op
	view  *model.View // nil when it must be applied again
}

// Option configures a Service.
type Option func(*Service)

// WithLogger sets where the service logs what an operator should see
// later (a tool that panicked, with its stack); default: nowhere.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.logger = l } }

// WithClock sets the clock (tests pin it).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// New returns a service over an open store.
func New(st store.Store, opts ...Option) *Service {
	s := &Service{st: st, now: time.Now, threads: make(map[string]*Thread), logger: slog.New(slog.DiscardHandler)}
	if sh, ok := st.(store.Shared); ok && sh.Shared() {
		s.shared = true
	}
	for _, o := range opts {
		o(s)
	}
	s.instance = s.ids.next(s.now())
	return s
}

// Store returns the store the service writes through.
func (s *Service) Store() store.Store { return s.st }

// Keep returns what a package above the service keeps with it under
// key (a value of that package's own unexported type), made by fresh on
// first use: state that lives as long as the service, such as the text
// kept for searches, held here without the service knowing its type.
func (s *Service) Keep(key any, fresh func() any) any {
	if v, ok := s.kept.Load(key); ok {
		return v
	}
	v, _ := s.kept.LoadOrStore(key, fresh())
	return v
}

// Subscribe returns a channel of events and a function that ends the
// subscription.
func (s *Service) Subscribe() (<-chan Event, func()) { return s.bus.subscribe() }

// SetDefaultSession names the session that requests naming none go to
// (a face sets the one its operator has open); "" leaves it to the most
// recently updated.
func (s *Service) SetDefaultSession(sessionID string) {
	s.mu.Lock()
	s.defaultSession = sessionID
	s.mu.Unlock()
}

type authorKey struct{}

// WithAuthor returns a context whose writes are recorded as made by author
// (an MCP client's name); without it writes are the operator's.
func WithAuthor(ctx context.Context, author string) context.Context {
	return context.WithValue(ctx, authorKey{}, author)
}

// WithDefaultAuthor returns a context whose writes are recorded as made
// by author, unless ctx names one already (WithAuthor).
func WithDefaultAuthor(ctx context.Context, author string) context.Context {
	if _, ok := ctx.Value(authorKey{}).(string); ok {
		return ctx
	}
	return WithAuthor(ctx, author)
}

// AuthorFrom returns the author a context carries.
func AuthorFrom(ctx context.Context) string {
	if a, ok := ctx.Value(authorKey{}).(string); ok && a != "" {
		return a
	}
	return "operator"
}

type ruleKey struct{}

// Rule is what a memory policy's operation records of the rule that made
// it (model.Op's Rule and Turns), and what wrote the summary it puts in
// (its payload's SummarySource and SummaryModel).
type Rule struct {
	Name          string
	Turns         int
	Source, Model string
}

// WithRule returns a context whose operations record the rule of a
// memory policy that made them. Only the memory room sets it: no face or
// argument reaches it.
func WithRule(ctx context.Context, r Rule) context.Context {
	return context.WithValue(ctx, ruleKey{}, r)
}

// RuleFrom is the rule WithRule set, if any.
func RuleFrom(ctx context.Context) Rule {
	r, _ := ctx.Value(ruleKey{}).(Rule)
	return r
}

// Clock is the service's time now, in UTC (WithClock pins it in tests).
func (s *Service) Clock() time.Time { return s.now().UTC() }

// NewID returns a new ID for a session or an operation made at now:
// unique in this process, in creation order.
func (s *Service) NewID(now time.Time) string { return s.ids.next(now) }

// SummaryEndpoint is the endpoint summaries may be asked of
// (WithSummaryEndpoint).
func (s *Service) SummaryEndpoint() summary.Endpoint { return s.endpoint }

// Logger is where the service logs what an operator should see later.
func (s *Service) Logger() *slog.Logger { return s.logger }

// Resolve finds a session by ID, unique ID prefix or exact title; empty
// means the default session (the most recently updated).
func (s *Service) Resolve(ref string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resolveLocked(ref)
}

// resolveLocked finds a session by ID, unique ID prefix or exact title;
// empty means the default session (SetDefaultSession), else the most recently updated. An
// exact ID is one lookup; only prefixes and titles read every session.
func (s *Service) resolveLocked(ref string) (string, error) {
	if ref == "" && s.defaultSession != "" {
		if _, err := s.threadLocked(s.defaultSession); err == nil {
			return s.defaultSession, nil
		}
	}
	if ref == "" && s.latest != "" {
		return s.latest, nil
	}
	if ref != "" {
		if _, ok := s.threads[ref]; ok {
			return ref, nil
		}
		err := s.st.View(func(tx store.Tx) error { _, err := tx.Session(ref); return err })
		if err == nil {
			return ref, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	sessions, err := s.st.Sessions()
	if err != nil {
		return "", err
	}
	if ref == "" {
		if len(sessions) == 0 {
			return "", NotFoundf("there are no sessions yet: create one with create_session or import a file")
		}
		s.latest = sessions[0].ID
		return s.latest, nil
	}
	var byPrefix, byTitle []string
	for _, x := range sessions {
		if len(ref) >= 4 && strings.HasPrefix(x.ID, ref) {
			byPrefix = append(byPrefix, x.ID)
		}
		if x.Title == ref {
			byTitle = append(byTitle, x.ID)
		}
	}
	switch {
	case len(byPrefix) == 1:
		return byPrefix[0], nil
	case len(byPrefix) > 1:
		return "", Invalidf("session %q is ambiguous: it begins %d session IDs (%s)", ref, len(byPrefix), strings.Join(firstN(byPrefix, 5), ", "))
	case len(byTitle) == 1:
		return byTitle[0], nil
	case len(byTitle) > 1:
		return "", Invalidf("session %q is ambiguous: %d sessions have that title; use an ID (%s)", ref, len(byTitle), strings.Join(firstN(byTitle, 5), ", "))
	}
	return "", NotFoundf("session %q not found: give a session ID, a unique ID prefix or a title (list_sessions shows them)", ref)
}

func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return append(slices.Clone(xs[:n]), "…")
	}
	return xs
}

// threadLocked returns the cached thread of a session, loading it on
// first use.
func (s *Service) threadLocked(id string) (*Thread, error) {
	if th, ok := s.threads[id]; ok {
		if !s.shared || s.current(th) {
			return th, nil
		}
		delete(s.threads, id) // another weft on the store wrote it since
	}
	var th *Thread
	err := s.st.View(func(tx store.Tx) error {
		var err error
		th, err = loadThread(tx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFoundf("session %q not found", id)
	}
	if err != nil {
		return nil, err
	}
	s.threads[id] = th
	return th, nil
}

// recordLocked returns a session's cached state if there is one, else
// one that holds only its record (no heads, operations or view), for a
// write that needs nothing more and does not keep what it writes in the
// cache: an import's batch.
func (s *Service) recordLocked(id string) (*Thread, error) {
	if c, ok := s.threads[id]; ok {
		return c, nil
	}
	c := &Thread{}
	err := s.st.View(func(tx store.Tx) error {
		var err error
		c.Info, err = tx.Session(id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFoundf("session %q not found", id)
	}
	return c, err
}

// Identities returns the Identities of the first n stored messages,
// reading in tx only those not known yet.
func (c *Thread) Identities(tx store.Tx, n int) ([]model.Ident, error) {
	if have := len(c.idents); have < n {
		err := tx.Messages(c.Info.ID, uint64(have+1), uint64(n), func(m model.Message) error {
			c.idents = append(c.idents, model.Identity(m.Role, m.Content, model.DecodeParts(m.Parts)))
			return nil
		})
		if err != nil {
			c.idents = c.idents[:have]
			return nil, err
		}
		if len(c.idents) < n {
			return nil, fmt.Errorf("session %s: %d stored messages were expected, %d were read", c.Info.ID, n, len(c.idents))
		}
	}
	return c.idents[:n], nil
}

// View returns the thread's current view, applying operations again
// only when something other than an append changed.
func (th *Thread) View() *model.View {
	if th.view == nil {
		v := thread.Apply(th.Heads, th.Ops, th.Info.ActiveTags)
		v.SessionID, v.Version = th.Info.ID, th.Info.Version
		th.view = v
	}
	return th.view
}

// ViewOf is the view of the thread's first n stored messages, with the
// operations applied to them as to the whole thread (one whose targets
// are partly past them applies to those present), and their tokens:
// what a caller that sends again the start of the thread (a retry, a
// regenerate) sees of it.
func (th *Thread) ViewOf(n int) (*model.View, int) {
	n = min(max(n, 0), len(th.Heads))
	if n == len(th.Heads) {
		return th.View(), th.Info.Tokens
	}
	heads := th.Heads[:n:n]
	v := thread.Apply(heads, th.Ops, th.Info.ActiveTags)
	v.SessionID, v.Version = th.Info.ID, th.Info.Version
	tokens := 0
	for _, h := range heads {
		tokens += int(h.Tokens)
	}
	return v, tokens
}

// InvalidateView drops the thread's view, to be applied again on next
// use: for a change that is not an append (operations added).
func (th *Thread) InvalidateView() { th.view = nil }

// Snapshot is a consistent read of one session: its record and view.
type Snapshot struct {
	Info model.Session
	View *model.View
	Ops  []model.Op
	// Heads are the stored messages' heads the view was applied to
	// (they only grow at the end, so the slice stays as it was).
	Heads []model.Head
}

// Snapshot reads a session (by ref, as Resolve takes it) consistently:
// its record, view, operations and heads.
func (s *Service) Snapshot(ref string) (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.resolveLocked(ref)
	if err != nil {
		return Snapshot{}, err
	}
	th, err := s.threadLocked(id)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Info: th.Info, View: th.View(), Ops: th.Ops, Heads: th.Heads[:len(th.Heads):len(th.Heads)]}, nil
}

// View returns a session's record and current effective view. Views are
// immutable: hold on to them freely.
func (s *Service) View(ref string) (model.Session, *model.View, error) {
	snap, err := s.Snapshot(ref)
	return snap.Info, snap.View, err
}

// Operations returns a session's operations in creation order.
func (s *Service) Operations(ref string) ([]model.Op, error) {
	snap, err := s.Snapshot(ref)
	return slices.Clone(snap.Ops), err
}

// checkVersion refuses a write made against a stale version, saying what
// changed since.
func checkVersion(info *model.Session, expected *uint64) error {
	if expected == nil || *expected == info.Version {
		return nil
	}
	if *expected > info.Version {
		return Conflictf("expected_version %d is ahead of session %s, which is at version %d", *expected, info.ID, info.Version)
	}
	return Conflictf("%s. Read the thread again and retry with the new version", ChangesSince(info, *expected))
}

// ChangesSince says what changed in a session since version v, from its
// log of recent writes.
func ChangesSince(info *model.Session, v uint64) string {
	changes, complete := info.ChangesSince(v)
	var b strings.Builder
	fmt.Fprintf(&b, "session %s is at version %d, not %d: since then", info.ID, info.Version, v)
	if !complete {
		fmt.Fprintf(&b, " (latest %d changes)", len(changes))
	}
	for i, c := range changes {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " v%d %s by %s", c.Version, c.What, c.Author)
	}
	return b.String()
}

// Prepare validates a request against a session's current state and
// describes the change it makes. It runs under the service lock, inside
// the write's transaction, which it may read (writes go in change.store).
// next is the session's record as the change will leave it. A nil change
// means there is nothing to write; an error refuses the request.
type Prepare func(tx store.Tx, c *Thread, next *model.Session) (*Change, error)

// Change is what a prepared write will do.
type Change struct {
	What  string
	Op    *model.Op            // an operation to store (new or updated)
	Store func(store.Tx) error // further writes in the same transaction
	Apply func(*Thread)        // how the cached session changes once committed
	Event Event                // its Kind (and What, if not what) at least
	// Reload drops the cached session instead of applying the change to
	// it: an import's batches, which would otherwise keep the heads of a
	// whole file in memory.
	Reload bool
	// Aside marks a change beside the thread (pending context
	// preferences): the version stays and the session's history does
	// not record it.
	Aside bool
	// Deleted: the change removes the session (with aside, so its record
	// is not written again); the cache forgets it.
	Deleted bool
}

// errNothing rolls back a write whose prepare found nothing to do.
var errNothing = errors.New("nothing to write")

// Write is the one path for changes to a session: under the service lock
// it checks the version, lets prepare validate against the current
// session inside one transaction and describe the change, commits it,
// then updates the cache and publishes one event. A refused or failed
// request changes nothing.
func (s *Service) Write(ctx context.Context, ref string, expected *uint64, prepare Prepare) (model.Session, error) {
	return s.commit(ctx, false, func(Locked) (*Thread, error) {
		id, err := s.resolveLocked(ref)
		if err != nil {
			return nil, err
		}
		c, err := s.threadLocked(id)
		if err != nil {
			return nil, err
		}
		return c, checkVersion(&c.Info, expected)
	}, prepare)
}

// Create is write for a session that does not exist yet: info is its
// record before the change (version 0), and the change makes it.
func (s *Service) Create(ctx context.Context, info model.Session, prepare Prepare) (model.Session, error) {
	return s.commit(ctx, true, func(Locked) (*Thread, error) { return &Thread{Info: info}, nil }, prepare)
}

// WriteReq is one session's part of a write (CommitAll): how to find
// (or make) the session, and how to prepare its change.
type WriteReq struct {
	// Created: the session does not exist yet; Find returns its record
	// before the change (version 0), and the change makes it.
	Created bool
	// Find runs under the service's lock, with what may be done there.
	Find func(Locked) (*Thread, error)
	// Prepare validates against the session found and describes the
	// change, inside the write's transaction.
	Prepare Prepare
	// Proxied: a session made for a conversation the context proxy
	// carries, which gets the file's policy for those.
	Proxied bool

	c     *Thread
	had   int // the messages the session held before
	event Event
	next  model.Session
	ch    *Change // nil: nothing to write for this session
}

// Session is the session's record as the committed write left it (as it
// was, when there was nothing to write).
func (r *WriteReq) Session() model.Session { return r.next }

// Locked is what a write's Find (or a read under WithLock) may do: it
// holds the service's lock, and is good only until Find returns.
type Locked struct{ s *Service }

// Resolve finds a session by ID, unique ID prefix or title, as every
// request's session argument is read (empty: the default session).
func (l Locked) Resolve(ref string) (string, error) { return l.s.resolveLocked(ref) }

// Thread returns a session's cached state, loading it on first use.
func (l Locked) Thread(id string) (*Thread, error) { return l.s.threadLocked(id) }

// Record returns a session's cached state if there is one, else one
// that holds only its record (recordLocked).
func (l Locked) Record(id string) (*Thread, error) { return l.s.recordLocked(id) }

// Cached calls fn for each session kept in memory, in no set order,
// until fn returns false.
func (l Locked) Cached(fn func(id string, t *Thread) bool) {
	for id, t := range l.s.threads {
		if !fn(id, t) {
			return
		}
	}
}

// Identities are the identities of th's first n stored messages
// (Thread.Identities), read in a read of their own where they are not
// known yet.
func (l Locked) Identities(th *Thread, n int) ([]model.Ident, error) {
	var ids []model.Ident
	err := l.s.st.View(func(tx store.Tx) error {
		var err error
		ids, err = th.Identities(tx, n)
		return err
	})
	return ids, err
}

// FirstIdentities are the sessions of a source that have messages, by
// the identity of their first message, read from the store. A session
// whose record or first message cannot be read is left out: it cannot
// be continued either.
func (l Locked) FirstIdentities(source string) (map[model.Ident][]string, error) {
	index := map[model.Ident][]string{}
	err := l.s.st.View(func(tx store.Tx) error {
		sessions, _ := tx.AllSessions() // a damaged record is no session to continue
		for _, x := range sessions {
			if x.Source != source || x.MessageCount == 0 {
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
	return index, err
}

// Shared reports whether other wefts write the store too (a shared
// store): what is kept in memory of the store may be behind it.
func (l Locked) Shared() bool { return l.s.shared }

// WithLock runs fn under the service's lock, for a read that must see
// the sessions kept in memory as one: what fn may do there is what a
// write's Find may (Locked). fn must not call the service's methods
// that take the lock themselves.
func (s *Service) WithLock(fn func(Locked) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(Locked{s})
}

// PrepareCached is a write's Prepare that reads nothing of the store: it
// validates against the session as the service keeps it (th) alone.
func PrepareCached(prepare func(th *Thread, next *model.Session) (*Change, error)) Prepare {
	return func(_ store.Tx, th *Thread, next *model.Session) (*Change, error) { return prepare(th, next) }
}

// Unless is p, but writing nothing to a thread that skip holds of.
func (p Prepare) Unless(skip func(th *Thread) bool) Prepare {
	return func(tx store.Tx, th *Thread, next *model.Session) (*Change, error) {
		if skip(th) {
			return nil, nil
		}
		return p(tx, th, next)
	}
}

// commit runs a write of one session: find (or make) it, prepare, store,
// cache, publish.
func (s *Service) commit(ctx context.Context, created bool, find func(Locked) (*Thread, error), prepare Prepare) (model.Session, error) {
	r := &WriteReq{Created: created, Find: find, Prepare: prepare}
	if err := s.CommitAll(ctx, []*WriteReq{r}); err != nil {
		return model.Session{}, err
	}
	return r.next, nil
}

// CommitAll runs a write of several sessions (an import's small threads)
// as one: one lock and one transaction for all, and then one event per
// session changed. If any is refused or fails, none is written. A
// session with nothing to write is left as it was (its next is its
// record).
func (s *Service) CommitAll(ctx context.Context, reqs []*WriteReq) error {
	s.mu.Lock()
	locked, committed := true, false
	unlock := func() { locked = false; s.mu.Unlock() }
	defer func() {
		if locked { // a panic on the way: the lock is not left held,
			if committed { // nor a cache that may be half updated
				for _, r := range reqs {
					delete(s.threads, r.next.ID)
				}
			}
			unlock()
		}
	}()
	author, origin := AuthorFrom(ctx), OriginFrom(ctx)
	var refused error
	var err error
	for attempt := 0; ; attempt++ {
		for _, r := range reqs {
			c, err := r.Find(Locked{s})
			if err != nil {
				unlock()
				return err
			}
			r.c, r.next, r.had = c, c.Info, c.Info.MessageCount
			r.next.ActiveTags = slices.Clone(c.Info.ActiveTags)
			r.next.Changes = slices.Clone(c.Info.Changes)
		}
		err = s.st.Update(func(tx store.Tx) error {
			if err := s.checkCurrent(tx, reqs); err != nil {
				return err
			}
			return s.prepareAll(tx, reqs, author, origin, &refused)
		})
		if !errors.Is(err, errStale) && !errors.Is(err, store.ErrConflict) || attempt == maxStale {
			break
		}
		// Another weft on the same store wrote these sessions meanwhile:
		// read them again, and prepare the write anew, after a pause that
		// grows and differs from the other's, without the lock (every
		// attempt finds and prepares from the start: nothing of this
		// one is carried into the next).
		for _, r := range reqs {
			delete(s.threads, r.c.Info.ID)
		}
		refused = nil
		unlock()
		time.Sleep(time.Duration(rand.IntN(1+min(attempt, 20))) * time.Millisecond)
		s.mu.Lock()
		locked = true
	}
	if errors.Is(err, errNothing) {
		for _, r := range reqs {
			r.next, r.ch = r.c.Info, nil // read under the lock: another write may change it
		}
		unlock()
		return nil
	}
	if err != nil {
		unlock()
		if refused != nil {
			return refused
		}
		if len(reqs) == 1 {
			return fmt.Errorf("writing session %s: %w", reqs[0].next.ID, err)
		}
		return fmt.Errorf("writing %d sessions: %w", len(reqs), err)
	}
	committed = true
	for _, r := range reqs {
		c, ch, id := r.c, r.ch, r.next.ID
		if ch == nil {
			r.next = c.Info
			continue
		}
		s.latest = id
		switch {
		case ch.Deleted:
			delete(s.threads, id)
			if s.latest == id {
				s.latest = ""
			}
			if s.defaultSession == id {
				s.defaultSession = ""
			}
		case ch.Reload:
			delete(s.threads, id) // loaded again from the store on next use
		default:
			c.Info = r.next
			s.threads[id] = c
			if ch.Apply != nil {
				ch.Apply(c)
			}
			if c.view != nil && c.view.Version != r.next.Version {
				v := *c.view // views already handed out stay as they were
				v.Version = r.next.Version
				c.view = &v
			}
		}
	}
	unlock()

	for _, r := range reqs {
		if r.ch != nil {
			s.bus.publish(r.event)
		}
	}
	// What follows a write that added messages (a memory policy's check)
	// runs before the write returns, so its caller sees the thread as the
	// policy leaves it.
	if s.afterAppend != nil {
		for _, r := range reqs {
			if r.ch != nil && !r.ch.Deleted && r.next.MessageCount > r.had {
				s.afterAppend(ctx, s, r.next.ID)
			}
		}
	}
	return nil
}

// WithAfterAppend runs fn after every write that adds messages to a
// session (an append, a turn, an import batch, a proxied request), once
// the write is committed and outside the service's lock, before the
// write returns: the memory policy's check (ops/memory) is one.
func WithAfterAppend(fn func(ctx context.Context, s *Service, sessionID string)) Option {
	return func(s *Service) { s.afterAppend = fn }
}
