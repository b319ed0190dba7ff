package tui

import (
	"strconv"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/tui/rows"
	"weft/tui/search"
)

// The search (/) is tui/search's Panel: typing asks it for a Query,
// which the root matches in a command through the Service; results that
// come back for an older query are dropped, so typing never waits.
// Going to a hit is the root's (hits.go).

type searchResultMsg struct {
	sid string // the session searched: a result for another is dropped
	search.Result
}

func (m *Model) openSearch() tea.Cmd {
	// The session's text for searches is read while the operator types
	// the first characters (a second or two on a million messages); an
	// error shows with the search's own answer.
	svc, sid := m.svc, m.sid
	prepare := func() tea.Msg {
		_ = svc.PrepareSearch(sid)
		return nil
	}
	return tea.Batch(m.search.Open(m.styles), prepare)
}

// runSearch matches the query as typed in a command, when it asks for a
// search not sent yet.
func (m *Model) runSearch() tea.Cmd {
	q, ok := m.search.Next()
	if !ok {
		return nil
	}
	svc, sid := m.svc, m.sid
	if q.Exact {
		return func() tea.Msg {
			hits, ids, total, err := svc.SubstringLines(sid, q.Text, search.ExactLimit)
			return searchResultMsg{sid, search.Result{Seq: q.Seq, Query: q.Text, Hits: hits, IDs: ids, Err: err, Exact: true, Total: total}}
		}
	}
	return func() tea.Msg {
		hits, ids, state, err := svc.FuzzyLines(sid, q.Text, q.State, search.Limit)
		return searchResultMsg{sid, search.Result{Seq: q.Seq, Query: q.Text, Hits: hits, IDs: ids, State: state, Err: err, Total: len(hits)}}
	}
}

func (m *Model) searchResult(msg searchResultMsg) tea.Cmd {
	if msg.sid != m.sid {
		return nil // searched in the session shown before a switch
	}
	if !m.search.Take(msg.Result, m.view) {
		return nil
	}
	// enter came before these hits: go to the best of them now.
	if len(m.search.Hits()) > 0 {
		return m.gotoHit(0)
	}
	return m.flash("no match for "+strconv.Quote(m.search.Query()), false)
}

func (m *Model) searchKey(msg tea.KeyPressMsg) tea.Cmd {
	k, cmd := m.search.HandleKey(msg)
	if k >= 0 {
		return m.gotoHit(k)
	}
	return tea.Batch(cmd, m.runSearch())
}

// markLine marks the search's hits on line i of row r's rendered lines.
func (m *Model) markLine(r, i int, l string) string {
	return m.search.Mark(i, l, func() (model.ItemID, []string, bool) {
		id, ok := m.rowItemID(r)
		if !ok {
			return "", nil, false
		}
		return id, m.rowLines(r), true
	}, m.styles.Search.Match)
}

// rowItemID is the ID of the item row r shows, if it shows one.
func (m *Model) rowItemID(r int) (model.ItemID, bool) {
	switch rw := m.rowAt(r); rw.Kind {
	case rows.Item:
		return m.view.ID(m.view.Items[rw.Item]), true
	case rows.Hidden:
		return m.view.ID(m.view.Markers[rw.Marker].Hidden[rw.Item]), true
	}
	return "", false
}

// hitStatus is the status bar's "match 3/17" while the cursor is on the
// hit gone to last, else "".
func (m *Model) hitStatus() string {
	return m.search.Status(func() (model.ItemID, bool) { return m.rowItemID(m.cursor) })
}
