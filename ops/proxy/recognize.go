package proxy

import (
	"errors"
	"slices"
	"strings"

	"weft/formats"
	"weft/formats/codex"
	"weft/model"
	"weft/ops"
)

// Recognising the session a request continues. A request names no
// session as a rule: its messages are the caller's whole thread, and
// the session they continue is the one whose stored messages they begin
// with (by identity, whatever shape they left weft in), or the one that
// holds them all already (the request is sent again). The proxy looks
// among the sessions it started, which it knows by the identity of
// their first message; a session it did not start is continued only
// when the request names it. All of it runs under the service's lock
// (ops.Locked), so that what is recognised is what the write finds.

// match finds the session msgs continue: the one named, if the
// messages continue it; else the proxy's session they continue
// furthest (the most recently updated of equals). It returns nil and
// the title a new session takes when there is none, or an error when
// the name is ambiguous. On a shared store, a request that continues no
// session the index knows reads the index again when reread is set (it
// is read from every session record: once a request, not again when its
// messages are stored a moment later).
func (e *Engine) match(l ops.Locked, ref string, msgs []ops.CallerMessage, reread bool) (*ops.Thread, string, error) {
	if ref != "" {
		id, err := l.Resolve(ref)
		switch {
		case errors.Is(err, ops.ErrNotFound):
			// Named, and not there yet: the request starts it.
			title, err := ops.ValidTitle(ref)
			return nil, title, err
		case err != nil:
			return nil, "", err
		default:
			c, err := l.Thread(id)
			if err != nil {
				return nil, "", err
			}
			ok, err := continues(l, c, msgs)
			if ok || err != nil {
				return c, "", err
			}
		}
	}
	first := msgs[0].Identity
	best, err := e.continued(l, first, msgs)
	if err == nil && best == nil && reread && l.Shared() {
		// Another weft on the store may have started it: the index
		// this one keeps is read again.
		e.forgetAll()
		best, err = e.continued(l, first, msgs)
	}
	if err != nil || best != nil {
		return best, "", err
	}
	return nil, proxyTitle(msgs), nil
}

// continued is the proxy's session msgs continue furthest (the most
// recently updated of equals), or nil.
func (e *Engine) continued(l ops.Locked, first model.Ident, msgs []ops.CallerMessage) (*ops.Thread, error) {
	ids, err := e.startedWith(l, first)
	if err != nil {
		return nil, err
	}
	var best *ops.Thread
	bestCover := 0
	for _, id := range ids {
		c, err := l.Thread(id)
		if errors.Is(err, ops.ErrNotFound) { // deleted since
			e.forget(first, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		// The session that covers most of the request; of equals, the
		// one closest to it (a request it continues rather than one that
		// sends again the start of it), then the latest.
		n, cover := c.Info.MessageCount, min(c.Info.MessageCount, len(msgs))
		if best != nil {
			bn := best.Info.MessageCount
			if cover < bestCover || cover == bestCover && (n > bn || n == bn && !c.Info.UpdatedAt.After(best.Info.UpdatedAt)) {
				continue
			}
		}
		ok, err := continues(l, c, msgs)
		if err != nil {
			return nil, err
		}
		if ok && n > 0 {
			best, bestCover = c, cover
		}
	}
	return best, nil
}

// departure finds the proxy's session msgs depart from in the middle:
// the one whose stored messages they share the longest start with, that
// start shorter than both and holding an answer (the agent rewound, or
// edited an earlier message). A start of prompts alone is no departure:
// conversations that open with the same system prompt, or the same
// question, are each its own. It returns nil when msgs share no such
// start with a session, or continue one.
func (e *Engine) departure(l ops.Locked, msgs []ops.CallerMessage) (*ops.Thread, int, error) {
	ids, err := e.startedWith(l, msgs[0].Identity)
	if err != nil {
		return nil, 0, err
	}
	var best *ops.Thread
	bestShared := 0
	for _, id := range ids {
		c, err := l.Thread(id)
		if errors.Is(err, ops.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		shared, n, err := sharedStart(l, c, msgs)
		if err != nil {
			return nil, 0, err
		}
		if shared == n {
			return nil, 0, nil // continued, or sent again: no departure
		}
		if !answered(msgs[:shared]) {
			continue
		}
		if shared > bestShared || shared == bestShared && best != nil && c.Info.UpdatedAt.After(best.Info.UpdatedAt) {
			best, bestShared = c, shared
		}
	}
	if bestShared == 0 {
		return nil, 0, nil
	}
	return best, bestShared, nil
}

// answered reports whether msgs hold an answer: a message of the
// assistant's.
func answered(msgs []ops.CallerMessage) bool {
	for i := range msgs {
		if msgs[i].Message.Role == model.RoleAssistant {
			return true
		}
	}
	return false
}

// forkOf is the link of a fork of c resting on its stored messages
// 1..shared: it ends at the item of c's thread that shows message
// shared (or the summary that stands for it).
func forkOf(c *ops.Thread, shared int) *model.Fork {
	v := c.View()
	idx, _ := v.PlaceOfSeq(uint64(shared))
	if idx < 0 || idx >= len(v.Items) {
		idx = len(v.Items) - 1
	}
	at := model.MessageID(uint64(shared))
	if idx >= 0 {
		at = v.ID(v.Items[idx])
	}
	return &model.Fork{SessionID: c.Info.ID, At: at, Index: idx}
}

// continues reports whether msgs are c's stored messages, then perhaps
// more, or the first of them: a request sent again (a retry, a
// regenerate, samples from one prefix) continues the session it was
// stored in.
func continues(l ops.Locked, c *ops.Thread, msgs []ops.CallerMessage) (bool, error) {
	shared, n, err := sharedStart(l, c, msgs)
	return err == nil && shared == n, err
}

// sharedStart is how many of c's stored messages msgs begin with, of the
// n both have.
func sharedStart(l ops.Locked, c *ops.Thread, msgs []ops.CallerMessage) (shared, n int, err error) {
	n = min(c.Info.MessageCount, len(msgs))
	ids, err := l.Identities(c, n)
	if err != nil {
		return 0, n, err
	}
	for shared < n && msgs[shared].Identity == ids[shared] {
		shared++
	}
	return shared, n, nil
}

// startedWith are the sessions the proxy started whose first message
// is first. The index is read from the file once, under the service's
// lock (l), so that no session the proxy starts meanwhile is missed.
func (e *Engine) startedWith(l ops.Locked, first model.Ident) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.loaded {
		index, err := l.FirstIdentities(Source)
		if err != nil {
			return nil, err
		}
		e.byFirst, e.loaded = index, true
	}
	return slices.Clone(e.byFirst[first]), nil
}

// started adds a session the proxy started to the index, if it is read
// already (else it is read with it). It runs under the service's lock,
// in the write's Apply.
func (e *Engine) started(first model.Ident, sessionID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.loaded {
		e.byFirst[first] = append(e.byFirst[first], sessionID)
	}
}

// forgetAll drops the index, to be read from the store again.
func (e *Engine) forgetAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byFirst, e.loaded = nil, false
}

// forget takes a session deleted since out of the index.
func (e *Engine) forget(first model.Ident, sessionID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byFirst[first] = slices.DeleteFunc(e.byFirst[first], func(id string) bool { return id == sessionID })
}

// proxyTitle is a new session's title: the first line of what the user
// first wrote, passing over the blocks an agent adds in tags
// (<system-reminder>, <command-name>) and the context Codex CLI adds
// (# AGENTS.md instructions).
func proxyTitle(msgs []ops.CallerMessage) string {
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
