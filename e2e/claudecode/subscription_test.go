package claudecode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Notification methods the subscription check looks for.
const (
	updatedMethod     = "notifications/resources/updated"
	listChangedMethod = "notifications/resources/list_changed"
)

// notification is a notification weft sent Claude Code, and when.
type notification struct {
	method string
	uri    string
	via    string
	at     time.Time
}

func notifications(wire []wireLine) []notification {
	var out []notification
	for _, l := range wire {
		if l.From != "server" || len(l.Msg) == 0 {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(l.Msg, &m) == nil && len(m.ID) == 0 && strings.HasPrefix(m.Method, "notifications/") {
			out = append(out, notification{m.Method, m.Params.URI, l.Via, l.Time})
		}
	}
	return out
}

// notificationsAfter are the notifications weft sent from t on.
func notificationsAfter(wire []wireLine, t time.Time) []notification {
	var out []notification
	for _, n := range notifications(wire) {
		if n.at.After(t) {
			out = append(out, n)
		}
	}
	return out
}

// subscriptions are the resource URIs Claude Code subscribed to: by
// resources/subscribe, or in the 2026-07-28 protocol by
// subscriptions/listen's resourceSubscriptions. listen is what it asked
// subscriptions/listen for.
func subscriptions(wire []wireLine) (uris []string, listen []string) {
	for _, m := range messages(wire, "client") {
		switch m.Method {
		case "resources/subscribe":
			var p struct {
				URI string `json:"uri"`
			}
			json.Unmarshal(m.Params, &p)
			uris = append(uris, p.URI)
		case "subscriptions/listen":
			var p struct {
				Notifications map[string]json.RawMessage `json:"notifications"`
			}
			json.Unmarshal(m.Params, &p)
			for k, v := range p.Notifications {
				listen = append(listen, k+"="+string(v))
			}
			var subs []string
			json.Unmarshal(p.Notifications["resourceSubscriptions"], &subs)
			uris = append(uris, subs...)
		}
	}
	slices.Sort(listen)
	return uris, slices.Compact(listen)
}

// testResources: the stand-in asks Claude Code to list weft's resources;
// while it waits for the model, another client tags a message of the
// session and creates a session through weft's HTTP API; then it asks
// Claude Code to read weft://sessions/{id}, which must show that tag.
//
// Then the subscription. If Claude Code subscribed to the session, the
// tag must reach it as notifications/resources/updated. If it subscribed
// to nothing, the MCP log shows that (no resources/subscribe, no
// resourceSubscriptions in subscriptions/listen, although weft declared
// resources.subscribe), and the test checks instead the notification weft
// does send it for those edits: notifications/resources/list_changed for
// the new session. Either notification must pass to Claude Code and be
// taken without trouble (see takenQuietly).
func testResources(t *testing.T, f fixture, transport string, sec *section) {
	dir, w := start(t, f, transport)
	uri := "weft://sessions/" + f.session
	var (
		editErr  error
		editedAt time.Time
	)
	s := &standIn{calls: []call{
		{tool: "ListMcpResourcesTool", input: map[string]any{"server": "weft"}},
		{tool: "ReadMcpResourceTool", input: map[string]any{"server": "weft", "uri": uri}},
	}}
	s.afterResult = func(i int, _ toolResult) {
		if i != 0 {
			return
		}
		editedAt = time.Now()
		editErr = apiCall(w.api(), w.token, "tag_messages", map[string]any{"session_id": f.session, "start_idx": 1, "end_idx": 1, "tags": []string{otherTag}})
		if editErr == nil {
			editErr = apiCall(w.api(), w.token, "create_session", map[string]any{"title": "made by another client"})
		}
		// Claude Code waits for the model meanwhile: answer once the
		// notification the test checks has passed to it, so that what it
		// does with it comes before the run ends. Subscriptions are made
		// as it connects, so the log says by now which one is due.
		want := listChangedMethod
		wire, _ := parseWire(w.wire)
		if subs, _ := subscriptions(wire); slices.Contains(subs, uri) {
			want = updatedMethod
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); wire, _ = parseWire(w.wire) {
			if slices.ContainsFunc(notificationsAfter(wire, editedAt), func(n notification) bool { return n.method == want }) {
				time.Sleep(200 * time.Millisecond) // for Claude Code to act on it
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	run := runClaude(t, dir, w, "List weft's resources, then read the session "+f.session+".", s)
	if editErr != nil {
		run.fail(t, dir, "another client could not edit through weft's HTTP API at %s: %v", w.api(), editErr)
	}
	ranToTheEnd(t, dir, run, 2)

	list, read := run.results[0], run.results[1]
	if list.tool != "ListMcpResourcesTool" || !strings.Contains(list.text, `"weft://sessions"`) {
		run.fail(t, dir, "ListMcpResourcesTool did not list weft://sessions: %s", list.text)
	}
	// Claude Code hands the model the resource's contents: the session,
	// as it is after the other client's edit.
	var contents struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	}
	if err := json.Unmarshal([]byte(read.text), &contents); err != nil || len(contents.Contents) != 1 || contents.Contents[0].URI != uri {
		run.fail(t, dir, "ReadMcpResourceTool's result is not %s's contents (%v): %.600s", uri, err, read.text)
	}
	if !strings.Contains(contents.Contents[0].Text, otherTag) {
		run.fail(t, dir, "the resource read after another client tagged message 1 does not show the tag %q: %.800s", otherTag, contents.Contents[0].Text)
	}

	h := readHandshake(run.wire)
	if !h.subscribe {
		run.fail(t, dir, "weft did not declare resources.subscribe to Claude Code")
	}
	subscribed, listen := subscriptions(run.wire)
	after := notificationsAfter(run.wire, editedAt)
	var verdict string
	if slices.Contains(subscribed, uri) {
		i := slices.IndexFunc(after, func(n notification) bool { return n.method == updatedMethod && n.uri == uri })
		if i < 0 {
			run.fail(t, dir, "Claude Code subscribed to %s, another client tagged it, and no %s for it came (after the edit weft sent: %v)", uri, updatedMethod, after)
		}
		taken, err := takenQuietly(run, after[i])
		if err != nil {
			run.fail(t, dir, "%s", err)
		}
		verdict = fmt.Sprintf("SUBSCRIBED to %v; the other client's tag reached it as %s %s", subscribed, updatedMethod, taken)
	} else {
		// Claude Code did not subscribe to the session: the log says what
		// it did ask for, and the notification weft sends every client
		// that asked for list changes is checked instead.
		why := "it sent no resources/subscribe"
		if len(listen) > 0 {
			why += " and asked subscriptions/listen only for " + strings.Join(listen, " ")
		}
		if len(subscribed) > 0 {
			why = fmt.Sprintf("it subscribed to %v only", subscribed)
		}
		i := slices.IndexFunc(after, func(n notification) bool { return n.method == listChangedMethod })
		if i < 0 {
			run.fail(t, dir, "Claude Code did not subscribe (%s), and weft sent it no %s after another client created a session (after the edit weft sent: %v)", why, listChangedMethod, after)
		}
		taken, err := takenQuietly(run, after[i])
		if err != nil {
			run.fail(t, dir, "%s", err)
		}
		verdict = fmt.Sprintf("NOT SUBSCRIBED: Claude Code did not subscribe although weft declared resources.subscribe (%s); instead %s %s", why, listChangedMethod, taken)
	}
	var sent []string
	for _, n := range after {
		sent = append(sent, n.method+" "+n.uri)
	}
	sec.set(func(s *section) {
		s.add("resources", run, fmt.Sprintf("ListMcpResourcesTool listed weft://sessions; ReadMcpResourceTool(%s) shows the tag another client set during the run", uri))
		s.subscription = verdict
		s.afterEdit = fmt.Sprintf("after the other client's tag and new session weft sent Claude Code: %s", strings.Join(sent, ", "))
	})
}

// takenQuietly checks that Claude Code took the notification n without
// trouble: it passed to Claude Code (the tee or the proxy handed it on),
// Claude Code sent no error back and did not connect again afterwards,
// its debug log has no error or warning from then on, and the requests it
// made afterwards on the same connection were answered. It says how the
// notification came, for the report.
func takenQuietly(run claudeRun, n notification) (string, error) {
	answered := map[string]bool{}
	for _, l := range run.wire {
		if l.Time.Before(n.at) {
			continue
		}
		if strings.Contains(l.Note, notPassedOn) {
			return "", fmt.Errorf("after weft sent %s: %s %s: %s", n.method, l.From, l.Via, l.Note)
		}
		for _, m := range messages([]wireLine{l}, l.From) {
			switch {
			case l.From == "client" && len(m.Error) > 0:
				return "", fmt.Errorf("after weft sent %s, Claude Code sent an error: %s", n.method, l.Msg)
			case l.From == "client" && (m.Method == "initialize" || m.Method == "server/discover"):
				return "", fmt.Errorf("after weft sent %s, Claude Code connected again (%s)", n.method, m.Method)
			case l.From == "client" && m.Method != "" && len(m.ID) > 0:
				answered[string(m.ID)] = false
			case l.From == "server" && m.Method == "" && len(m.ID) > 0:
				if _, ok := answered[string(m.ID)]; ok {
					if len(m.Error) > 0 {
						return "", fmt.Errorf("after weft sent %s, a request of Claude Code's failed: %s", n.method, l.Msg)
					}
					answered[string(m.ID)] = true
				}
			}
		}
	}
	if len(answered) == 0 {
		return "", fmt.Errorf("Claude Code made no request after weft sent %s, so nothing shows the connection still worked", n.method)
	}
	for id, ok := range answered {
		if !ok {
			return "", fmt.Errorf("after weft sent %s, Claude Code's request %s got no answer", n.method, id)
		}
	}
	bad, err := debugTrouble(run.debugLog, n.at)
	if err != nil {
		return "", err
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("after weft sent %s, Claude Code's debug log (%s) says:\n%s", n.method, run.debugLog, strings.Join(bad, "\n"))
	}
	via := n.via
	switch via {
	case "GET":
		via = "the GET event stream"
	case "POST":
		via = "a POST's event stream"
	}
	return fmt.Sprintf("came over %s and was taken without trouble (no error back, no reconnection, no error or warning in Claude Code's debug log, its %d later request(s) on the same connection answered)", via, len(answered)), nil
}

// debugTrouble returns the lines of Claude Code's debug log at level
// ERROR or WARN from since on.
func debugTrouble(path string, since time.Time) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("Claude Code's debug log: %v", err)
	}
	defer f.Close()
	var bad []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		stamp, rest, ok := strings.Cut(sc.Text(), " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		// A line a millisecond early still counts: the log keeps
		// milliseconds, the MCP log nanoseconds.
		if !ok || err != nil || at.Before(since.Add(-time.Millisecond)) {
			continue
		}
		if strings.HasPrefix(rest, "[ERROR]") || strings.HasPrefix(rest, "[WARN]") {
			bad = append(bad, sc.Text())
		}
	}
	return bad, sc.Err()
}
