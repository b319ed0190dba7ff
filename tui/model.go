// Package tui is weft's terminal interface: one root bubbletea model over
// the same ops.Service every other face uses, through tools.Desk (the
// Service in this process, or the weft that holds the file through its
// listener). Children are plain structs; I/O happens in commands, never
// in Update. The root owns the session shown, the cursor and the
// screen; its children have rooms of their
// own: dialog (the modals, which answer with actions the root carries
// out), search (the search panel and its hits), rows (which row shows
// what, and how it looks), raw (the raw view's extents), timeline (the
// strip above the thread), markdown (message bodies) and handoff
// ($EDITOR and $PAGER). None of them reaches the Service: the root does,
// and hands them what it read.
package tui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"weft/internal/termsafe"
	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/themes"
	"weft/tui/dialog"
	"weft/tui/diffview"
	"weft/tui/handoff"
	"weft/tui/markdown"
	"weft/tui/rows"
	"weft/tui/search"
)

// Options configure the TUI.
type Options struct {
	Session string // session to open (ID, prefix or title); default: the latest
	Theme   string // a built-in theme; default: chosen from the terminal background
	// NoColor keeps the shapes and drops the colours (the CLI sets it
	// from NO_COLOR, as no-color.org asks).
	NoColor bool
	// Editor is the command ctrl+e hands a dialog's text to (the CLI
	// sets it from $VISUAL, else $EDITOR); empty means vi.
	Editor string
	// Pager is the command p shows a message with, read-only (the CLI
	// sets it from $PAGER); empty means less.
	Pager string
	// Listener is the embedded MCP server, shown in the status bar; nil
	// when there is none.
	Listener Listener
	// AgentsPoll is how often the status bar reads the Listener's count
	// of agents; 0 is a second.
	AgentsPoll time.Duration
	// Notice is what the operator should know when the TUI opens (weft
	// demo's file), shown at the bottom for a while; empty for none.
	Notice string
	// Holder is the weft that holds the file, when the TUI works through
	// it (ops/relay's Remote): the status bar names where it listens now.
	// Nil in this process.
	Holder Holder
	// Logger is the TUI's log (the CLI's is a file next to the database):
	// what went wrong that the screen says only in a sentence. Nil
	// discards it.
	Logger *slog.Logger
}

// Holder is what the status bar shows of the weft the TUI works through.
type Holder interface {
	Addr() string // where it listens now, e.g. 127.0.0.1:7433
}

// Listener is what the status bar shows of the embedded MCP server.
type Listener interface {
	Addr() string   // where agents connect, e.g. http://127.0.0.1:7433/mcp
	Agents() int    // connected MCP sessions now
	Notice() string // what the operator should know of it at start (a port fallback), or ""
}

// Model is the root model.
type Model struct {
	svc    tools.Desk // the engine: in this process, or through the weft that holds the file
	opts   Options
	styles *themes.Styles
	md     *markdown.Renderer // message bodies, rendered in the theme's colours
	keys   KeyMap
	help   help.Model
	full   bool // full help shown

	width, height int

	sid      string
	info     model.Session
	view     *model.View
	rows     rows.Source
	expanded map[string]bool       // markers expanded, by operation ID
	open     map[model.ItemID]bool // items unfolded
	cursor   int                   // row
	top      int                   // first row on screen
	skip     int                   // lines of the top row above the screen: a tall cursor row being read (see scroll.go)
	empty    bool                  // the file has no session yet
	placed   int                   // row a jump placed a third of the way down, until bodies load or a key moves on; -1: none
	hit      *hitLine              // a search hit gone to, waiting for its body to scroll to its line
	anchor   int                   // row where a range selection started; -1 for none

	dialogs   dialog.Overlay // in front of the thread, the front one getting the keys (dialogs.go)
	saving    dialog.Dialog  // the dialog whose edit is on its way; it stays open until it is done
	search    search.Panel
	timeline  ops.Timeline
	moving    *move
	redoStack []undoStep
	raw       rawState // the stored thread, when R shows it
	helpCache struct {
		key  helpCacheKey
		line string
	}

	bodies  map[uint64]*model.Message // stored messages on or near the screen
	loading bool
	lines   map[lineKey][]string // rendered rows

	agents     int  // connected to the listener, as last seen (agents.go)
	holderLost bool // the weft the TUI works through stopped answering (held.go)
	// summaries counts the summaries of a view (summaryCount).
	summaries struct {
		of *model.View
		n  int
	}
	status    string
	statusErr bool
	statusSeq int
	err       error

	feat features  // copying, the pager, the mouse, the filter, other sessions (features.go)
	held []tea.Msg // keys typed ahead of an answer they depend on (typeahead.go)
}

// New returns the root model over svc: tools.Local over a Service in
// this process, or ops/relay's Remote through the weft that holds the
// file.
func New(svc tools.Desk, opts Options) *Model {
	m := &Model{
		svc: svc, opts: opts, keys: DefaultKeyMap(), help: help.New(),
		expanded: map[string]bool{}, open: map[model.ItemID]bool{}, anchor: -1, placed: -1,
		bodies: map[uint64]*model.Message{}, lines: map[lineKey][]string{},
	}
	p := themes.Default(true)
	if opts.Theme != "" {
		if forced, err := themes.Lookup(opts.Theme); err == nil {
			p = forced
		}
	}
	m.setStyles(p)
	return m
}

func (m *Model) setStyles(p themes.Palette) {
	m.styles = themes.New(p, m.opts.NoColor)
	m.md = markdown.New(m.styles.Markdown())
	m.help.Styles = help.DefaultStyles(p.Dark)
	m.help.Styles.ShortKey = m.styles.Help.Key
	m.help.Styles.ShortDesc = m.styles.Help.Desc
	m.help.Styles.FullKey = m.styles.Help.Key
	m.help.Styles.FullDesc = m.styles.Help.Desc
	clear(m.lines)
}

// Messages.
type (
	viewLoadedMsg struct {
		info model.Session
		view *model.View
		err  error
	}
	bodiesLoadedMsg struct {
		sid  string
		msgs []model.Message
		err  error
	}
	eventMsg ops.Event
	// statusTimerMsg starts the timer that clears a transient message;
	// statusExpiredMsg is that timer running out.
	statusTimerMsg struct {
		seq int
		ttl time.Duration
	}
	statusExpiredMsg struct{ seq int }
)

// Init loads the session and asks the terminal for its background.
func (m *Model) Init() tea.Cmd {
	notices := []string{}
	if m.opts.Notice != "" {
		notices = append(notices, m.opts.Notice)
	}
	if l := m.opts.Listener; l != nil {
		m.agents = l.Agents()
		if l.Notice() != "" {
			notices = append(notices, l.Notice())
		}
	}
	var notice tea.Cmd
	if len(notices) > 0 {
		// Read at the start, and maybe copied: longer than a passing
		// message.
		notice = m.flashFor(strings.Join(notices, " · "), false, noticeTTL)
	}
	return tea.Batch(m.loadView(m.opts.Session), tea.RequestBackgroundColor, notice, m.startAgentsWatch())
}

func (m *Model) loadView(ref string) tea.Cmd {
	svc := m.svc
	return func() tea.Msg {
		info, v, err := svc.View(ref)
		return viewLoadedMsg{info, v, err}
	}
}

// loadBodies reads the stored messages the screen (and a margin around
// it) needs and has not got.
func (m *Model) loadBodies() tea.Cmd {
	if m.view == nil || m.loading {
		return nil
	}
	// Load in chunks: nothing while the screen and half a margin around
	// it are loaded, then a whole margin at once, so a scroll step does
	// not cost a read (and a second frame) each time.
	margin := max(m.height, 20)
	missing := false
	for r := max(m.top-margin/2, 0); r < min(m.top+m.height+margin/2, m.rows.Len()); r++ {
		if seq := m.seqAt(r); seq > 0 {
			if _, ok := m.bodies[seq]; !ok {
				missing = true
				break
			}
		}
	}
	if !missing {
		return nil
	}
	var seqs []uint64
	for r := max(m.top-margin, 0); r < min(m.top+m.height+margin, m.rows.Len()); r++ {
		if seq := m.seqAt(r); seq > 0 {
			if _, ok := m.bodies[seq]; !ok {
				seqs = append(seqs, seq)
			}
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	m.loading = true
	svc, sid := m.svc, m.sid
	return func() tea.Msg {
		out, err := svc.Messages(sid, seqs)
		return bodiesLoadedMsg{sid, out, err}
	}
}

// seqAt is the stored message a row shows, if any.
func (m *Model) seqAt(r int) uint64 {
	rw := m.rowAt(r)
	switch rw.Kind {
	case rows.Item:
		return m.view.Items[rw.Item].Seq
	case rows.Hidden:
		return m.view.Markers[rw.Marker].Hidden[rw.Item].Seq
	}
	return 0
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.hold(msg) {
		return m, nil // typed ahead of an answer it depends on (typeahead.go)
	}
	_, cmd := m.update(msg)
	m.syncKeys()
	if len(m.held) > 0 {
		cmd = tea.Batch(cmd, m.release())
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.scrollToCursor()
		return m, m.loadBodies()
	case tea.BackgroundColorMsg:
		if m.opts.Theme == "" {
			m.setStyles(themes.Default(msg.IsDark()))
		}
		return m, nil
	case viewLoadedMsg:
		return m, m.viewLoaded(msg)
	case bodiesLoadedMsg:
		if msg.sid != m.sid {
			// Read for the session shown before a switch: its messages
			// share their IDs (m1, m2, …) with this one's, so they must
			// not be taken for this one's. The switch forgot that
			// request (see openSession): loading is this session's.
			return m, nil
		}
		m.loading = false
		if msg.err != nil {
			return m, m.flash(msg.err.Error(), true)
		}
		if len(m.bodies) > 4096 {
			clear(m.bodies) // keep memory flat: what the screen needs is loaded again
		}
		for i := range msg.msgs {
			m.bodies[msg.msgs[i].Seq] = &msg.msgs[i]
		}
		if m.placed == m.cursor {
			m.placeThird() // rows now have their real heights
		}
		m.scrollToCursor()
		m.showHit()
		return m, m.loadBodies()
	case eventMsg:
		if cmd, ok := m.holderEvent(ops.Event(msg)); ok {
			return m, cmd
		}
		if m.empty {
			// The first session of a new file, made by an agent or
			// another face: open it.
			return m, tea.Batch(m.loadView(msg.SessionID), m.flash(fmt.Sprintf("%s by %s", msg.What, msg.Author), false))
		}
		var cmds []tea.Cmd
		if _, ok := dialog.Find[*dialog.Sessions](&m.dialogs); ok {
			cmds = append(cmds, loadSessions(m.svc)) // the list follows what lands in the file
		}
		if msg.SessionID != m.sid || msg.Kind == ops.EventSessionDeleted {
			return m, tea.Batch(append(cmds, m.sessionEvent(ops.Event(msg)))...) // othersessions.go
		}
		// The TUI's own edits are reported by editDoneMsg, which loads
		// the view again: an edit of the operator's is new here only when
		// the view loaded is older (it came from the command line,
		// through the listener).
		if msg.Author == "operator" && msg.Version <= m.info.Version {
			return m, tea.Batch(cmds...)
		}
		cmds = append(cmds, m.loadView(m.sid), m.flash(fmt.Sprintf("%s by %s", m.eventWhat(ops.Event(msg)), msg.Author), false))
		if _, ok := dialog.Find[*dialog.Operations](&m.dialogs); ok {
			cmds = append(cmds, loadOps(m.svc, m.sid)) // the operator watches it land in the list too
		}
		return m, tea.Batch(cmds...)
	case featureMsg:
		return m, msg.apply(m)
	case tea.MouseClickMsg:
		return m, m.click(msg)
	case handoff.File:
		if _, ok := m.dialogs.Front().(*dialog.Text); ok || !msg.Edits() {
			return m, msg.Run()
		}
		return m, nil
	case handoff.Edited:
		// Back from $EDITOR, the whole screen is drawn again: the
		// terminal was another program's meanwhile, and drawing only
		// what changed since before could leave it blank.
		if d, ok := m.dialogs.Front().(*dialog.Text); ok {
			d.Edited(msg.Text, msg.Err)
		}
		return m, tea.ClearScreen
	case handoff.Paged:
		// Back from the pager, the whole screen is drawn again, as
		// after $EDITOR.
		if msg.Err != nil {
			return m, tea.Batch(m.flash("pager: "+msg.Err.Error(), true), tea.ClearScreen)
		}
		return m, tea.ClearScreen
	case draftDoneMsg:
		if d, ok := m.dialogs.Front().(*dialog.Text); ok {
			d.Drafted(msg.text, msg.by, msg.err)
		}
		return m, nil
	case opsLoadedMsg:
		if p, ok := dialog.Find[*dialog.Operations](&m.dialogs); ok && msg.err == nil {
			p.SetList(msg.list)
		}
		return m, nil
	case sessionsLoadedMsg:
		return m, m.sessionsLoaded(msg)
	case dialog.Msg:
		return m, m.act(m.dialogs.Deliver(msg))
	case agentsWatchMsg:
		return m, m.watchAgents()
	case agentsMsg:
		m.agents = msg.n
		return m, m.watchAgents()
	case statusTimerMsg:
		return m, tea.Tick(msg.ttl, func(time.Time) tea.Msg { return statusExpiredMsg{msg.seq} })
	case statusExpiredMsg:
		if msg.seq == m.statusSeq {
			m.status = ""
		}
		return m, nil
	case editDoneMsg:
		return m, m.editDone(msg)
	case reviseReadyMsg:
		return m, m.openRevise(msg)
	case timelineLoadedMsg:
		if msg.sid == m.sid {
			m.timeline = msg.t
		}
		return m, nil
	case rawViewMsg:
		return m, m.rawReady(msg)
	case rawOpsMsg:
		return m, m.rawOpsLoaded(msg)
	case timeJumpMsg:
		return m, m.timeJumped(msg)
	case memoryMsg:
		return m, m.memoryLoaded(msg)
	case forkedMsg:
		return m, m.forked(msg)
	case searchResultMsg:
		return m, m.searchResult(msg)
	case tea.KeyPressMsg:
		m.placed, m.hit = -1, nil
		if m.view == nil {
			// Nothing loaded (a new file, an error, or not yet): only
			// quitting means anything.
			if key.Matches(msg, m.keys.Quit) || msg.String() == "ctrl+c" {
				return m, tea.Quit
			}
			return m, nil
		}
		if m.search.IsOpen() {
			return m, m.searchKey(msg)
		}
		if d := m.dialogs.Front(); d != nil {
			if m.saving != nil {
				return m, nil // its edit answers in a moment: a second submit must not race it
			}
			return m, m.act(d, d.HandleMsg(msg))
		}
		return m, m.handleKey(msg)
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			if !m.scrollWithin(-3) {
				m.move(-3)
			}
		case tea.MouseWheelDown:
			if !m.scrollWithin(3) {
				m.move(3)
			}
		}
		return m, m.loadBodies()
	}
	return m, nil
}

// viewLoaded swaps in a new view, keeping the cursor on the item it was
// on, so an agent's edit elsewhere does not move the operator.
func (m *Model) viewLoaded(msg viewLoadedMsg) tea.Cmd {
	if msg.err != nil {
		if m.view == nil && m.opts.Session == "" && errors.Is(msg.err, ops.ErrNotFound) {
			m.empty = true // a new file: say how to fill it, and wait for an agent to
			return nil
		}
		m.err = msg.err
		return nil
	}
	if m.sid != "" && msg.info.ID != m.sid {
		// A reload of the session shown before a switch, asked for
		// before it: the operator has moved on.
		return nil
	}
	if cmd := m.filterFirst(msg); cmd != nil {
		return cmd // the filter picks the new view's items first (filter.go)
	}
	m.empty = false
	var keep model.ItemID
	if m.view != nil && m.rows.Len() > 0 {
		if rw := m.rows.At(m.cursor); rw.Kind == rows.Item {
			keep = m.view.ID(m.view.Items[rw.Item])
		}
	}
	anchor := m.anchorItem()
	if m.raw.on && msg.info.ID == m.sid {
		// The raw view is laid out again in a command (rawReady); until
		// it comes the one showing stays.
		m.info, m.raw.eff = msg.info, msg.view
		return tea.Batch(buildRaw(m.info.MessageCount, m.raw.eff), m.loadTimeline())
	}
	// R pressed while this reload was on its way: build the raw view of
	// the new effective view instead.
	pending := m.raw.pending && msg.info.ID == m.sid
	m.raw = rawState{pending: pending}
	first := m.view == nil
	m.sid, m.info, m.view = msg.info.ID, msg.info, msg.view
	m.svc.SetDefaultSession(m.sid)
	m.rows = m.rowIndex()
	switch {
	case keep != "" && m.view.IndexOf(keep) >= 0:
		m.cursor = m.rows.RowOfItem(m.view.IndexOf(keep))
	case keep != "" && m.hiddenPlace(keep) >= 0:
		// The item went into an operation (a digest, a snip): show where.
		m.jumpTo(m.hiddenPlace(keep))
	case first:
		m.cursor = max(m.rows.Len()-1, 0) // open at the latest message
	default:
		m.cursor = min(m.cursor, max(m.rows.Len()-1, 0))
	}
	m.keepAnchor(anchor)
	m.search.Resolve(m.view) // the hits' items, where they are now
	m.scrollToCursor()
	var raw tea.Cmd
	if pending {
		raw = buildRaw(m.info.MessageCount, m.view)
	}
	return tea.Batch(m.loadBodies(), m.loadTimeline(), raw, diffview.Reload(&m.dialogs))
}

// hiddenPlace is the index of the item that now hides a stored message
// (the digest's summary, the item after a snip), or -1.
func (m *Model) hiddenPlace(id model.ItemID) int {
	seq, ok := id.Seq()
	if !ok {
		return -1
	}
	if idx, visible := m.view.PlaceOfSeq(seq); !visible {
		return idx
	}
	return -1
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if m.moving != nil {
		switch {
		case key.Matches(msg, k.MoveDown):
			return m.startMove(1)
		case key.Matches(msg, k.MoveUp):
			return m.startMove(-1)
		case key.Matches(msg, k.Commit):
			return m.confirmMove()
		case key.Matches(msg, k.Cancel):
			m.cancelMove()
		case key.Matches(msg, k.Quit):
			m.cancelMove() // nothing was written: quitting loses only the preview
			return tea.Quit
		}
		return nil
	}
	if cmd, ok := m.featureKey(msg); ok {
		return cmd // y, p, F, ctrl+z, and esc clearing a filter (features.go)
	}
	// Keys that do nothing in the current state are switched off (see
	// syncKeys), so the raw view needs no switch of its own.
	switch {
	case key.Matches(msg, k.Cancel) && m.full:
		m.full = false
	case key.Matches(msg, k.Raw):
		return m.toggleRaw()
	case key.Matches(msg, k.Cancel) && m.raw.on:
		return m.toggleRaw()
	case key.Matches(msg, k.Cancel):
		m.anchor = -1
	case key.Matches(msg, k.Select):
		if m.anchor >= 0 {
			m.anchor = -1
		} else if _, _, ok := m.selection(); ok {
			m.anchor = m.cursor
		} else if r, ok := m.markerItemRow(); ok {
			// On a marker, the range starts at the item the status bar
			// says the cursor is at: the one the marker stands before.
			m.anchor = r
		} else {
			return m.flash("a range starts on a message, and there is none after this marker", true)
		}
	case key.Matches(msg, k.Tag):
		return m.startTag()
	case key.Matches(msg, k.Digest):
		return m.startDigest()
	case key.Matches(msg, k.Snip):
		return m.snip()
	case key.Matches(msg, k.Revise):
		return m.startRevise()
	case key.Matches(msg, k.Insert):
		return m.startInsert()
	case key.Matches(msg, k.MoveDown):
		return m.startMove(1)
	case key.Matches(msg, k.MoveUp):
		return m.startMove(-1)
	case key.Matches(msg, k.Sessions):
		return m.openSessions()
	case key.Matches(msg, k.Fork):
		return m.fork()
	case key.Matches(msg, k.Time):
		return m.startTimeJump()
	case key.Matches(msg, k.Memory):
		return m.openMemory()
	case key.Matches(msg, k.Search):
		return m.openSearch()
	case key.Matches(msg, k.Next):
		return m.nextHit(1)
	case key.Matches(msg, k.Prev):
		return m.nextHit(-1)
	case key.Matches(msg, k.Operations):
		m.dialogs.Open(dialog.NewOperations())
		return loadOps(m.svc, m.sid)
	case key.Matches(msg, k.Undo):
		return m.undo()
	case key.Matches(msg, k.Redo):
		return m.redo()
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.full = !m.full
	case key.Matches(msg, k.Down):
		m.lineDown(1)
	case key.Matches(msg, k.Up):
		m.lineUp(1)
	case key.Matches(msg, k.HalfDown):
		m.pageDown()
	case key.Matches(msg, k.HalfUp):
		m.pageUp()
	case key.Matches(msg, k.Top):
		m.home()
	case key.Matches(msg, k.Bottom):
		m.end()
	case key.Matches(msg, k.Toggle):
		m.toggle()
	default:
		if cmd := m.explainKey(msg); cmd != nil {
			return cmd
		}
	}
	return m.loadBodies()
}

// jumpTo puts the cursor on an item, or on the marker standing right
// before it when an operation shows there.
func (m *Model) jumpTo(index int) {
	if m.rows == nil || m.rows.Len() == 0 {
		return
	}
	index = min(max(index, 0), m.view.Len())
	r := m.rows.Len() - 1
	if index < m.view.Len() {
		r = m.rows.RowOfItem(index)
	}
	// Step back over the markers standing before the item: the first of
	// them is where the operation shows.
	for r > 0 && m.rows.At(r-1).Kind == rows.Marker {
		r--
	}
	m.cursor = r
	if !m.onScreen(r) {
		m.placed = r
		m.placeThird()
	}
	m.scrollToCursor()
}

// placeThird scrolls so the cursor's row stands a third of the way down:
// a jump off the screen shows what follows the target, with a little of
// what led to it.
func (m *Model) placeThird() {
	m.top, m.skip = m.cursor, 0
	for used := 0; m.top > 0; m.top-- {
		if used += len(m.rowLines(m.top - 1)); used > m.threadHeight()/3 {
			break
		}
	}
	m.fillBelow()
}

// fillBelow moves the window up while the rows from its top to the last
// leave lines blank at its foot: near the end of the thread the screen
// shows as much as fits rather than a third of it.
func (m *Model) fillBelow() {
	h, used := m.threadHeight(), 0
	for r := m.top; r < m.rows.Len() && used < h; r++ {
		used += len(m.rowLines(r))
	}
	for m.top > 0 && used < h {
		l := len(m.rowLines(m.top - 1))
		if used+l > h {
			break
		}
		m.top--
		used += l
	}
}

// onScreen reports whether row r is wholly on the screen now.
func (m *Model) onScreen(r int) bool {
	if r < m.top || r == m.top && m.skip > 0 {
		return false
	}
	used, h := 0, m.threadHeight()
	for i := m.top; i <= r; i++ {
		if used += len(m.rowLines(i)); used > h {
			return false
		}
	}
	return true
}

// halfPage moves the cursor past half a screen of lines: rows differ in
// height, so a half page is counted in lines, not rows.
func (m *Model) halfPage(dir int) {
	if m.rows == nil || m.rows.Len() == 0 {
		return
	}
	want := max(m.threadHeight()/2, 1)
	r := m.cursor
	for lines := 0; lines < want; {
		next := r + dir
		if next < 0 || next >= m.rows.Len() {
			break
		}
		n := len(m.rowLines(next))
		if seq := m.seqAt(next); seq > 0 && m.bodies[seq] == nil {
			n = 3 // not loaded yet: count it as a short message
		}
		lines += n
		r = next
	}
	m.move(r - m.cursor)
}

func (m *Model) move(d int) {
	if m.rows == nil || m.rows.Len() == 0 {
		return
	}
	m.cursor = min(max(m.cursor+d, 0), m.rows.Len()-1)
	m.scrollToCursor()
}

// toggle expands or collapses the marker or item under the cursor.
func (m *Model) toggle() {
	if m.rows == nil || m.rows.Len() == 0 {
		return
	}
	switch rw := m.rows.At(m.cursor); rw.Kind {
	case rows.Marker, rows.More:
		op := m.view.Markers[rw.Marker].OpID
		m.expanded[op] = !m.expanded[op]
		m.rows = m.rowIndex()
		m.cursor = m.rows.RowOfMarker(rw.Marker)
	case rows.Item:
		id := m.view.ID(m.view.Items[rw.Item])
		m.open[id] = !m.open[id]
	case rows.Hidden:
		// An original under an expanded marker unfolds as an item does
		// (its hint says enter); the marker's own row collapses it.
		id := m.view.ID(m.view.Markers[rw.Marker].Hidden[rw.Item])
		m.open[id] = !m.open[id]
	}
	m.scrollToCursor()
}

// statusTTL is how long a transient message shows; noticeTTL how long
// the notices at start do.
const (
	statusTTL = 4 * time.Second
	noticeTTL = 20 * time.Second
)

// flash shows a transient status message.
func (m *Model) flash(s string, isErr bool) tea.Cmd { return m.flashFor(s, isErr, statusTTL) }

// flashFor shows a status message for ttl.
func (m *Model) flashFor(s string, isErr bool, ttl time.Duration) tea.Cmd {
	m.statusSeq++
	// A message may quote the thread (an error naming a title, an
	// agent's name): shown, not obeyed.
	m.status, m.statusErr = termsafe.Line(s), isErr
	seq := m.statusSeq
	return func() tea.Msg { return statusTimerMsg{seq, ttl} }
}

// Run opens the TUI over svc until the operator quits.
func Run(ctx context.Context, svc tools.Desk, opts Options) error {
	m := New(svc, opts)
	p := tea.NewProgram(m, tea.WithContext(ctx))
	watching, stop := context.WithCancel(ctx)
	defer stop()
	go svc.Watch(watching, func(ev ops.Event) { p.Send(eventMsg(ev)) })
	_, err := p.Run()
	if m.err != nil {
		return m.err
	}
	return err
}
