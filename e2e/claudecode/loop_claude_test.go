package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"weft/e2e/internal/rig"
)

// The conversation of TestLoopClaudeCode: a question, a turn that reads
// a file of 300 measurements (the tool output worth digesting), the
// digest of that turn, a turn that reads a small file, and, resumed from
// the session weft writes back, one more question.
const (
	loopAsk1    = "What is a token bucket?"
	loopAsk2    = "Read measurements.txt and tell me the worst p99."
	loopAsk3    = "Which one suits our API gateway? Its limits are in gateway.md."
	loopAsk4    = "Next: how do I size the burst?"
	loopSummary = "Read measurements.txt: 300 samples of the api-gw bucket at 800-1,697 requests/s; the worst p99 is 21.0ms."
	gatewayMD   = "# api-gw limits\nsustained: 1,200 requests/s per tenant\nburst: 300\n"
)

// loopAnswer is the stand-in's text answer to a prompt.
func loopAnswer(prompt string) string { return "stand-in answers: " + prompt }

// listedSession is a session as list_sessions gives it while weft runs.
type listedSession = rig.Session

func listSessions(t *testing.T, db string) []listedSession {
	t.Helper()
	return rig.Sessions(t, weftBinary(t), db)
}

// settledSessions waits until weft's sessions are as ready says (the
// proxy stores an answer once it has relayed it, so a moment after the
// client has it), and returns them; after 10 s it fails, showing them.
func settledSessions(t *testing.T, db string, ready func([]listedSession) bool) []listedSession {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sessions := listSessions(t, db)
		if ready(sessions) {
			return sessions
		}
		if time.Now().After(deadline) {
			t.Fatalf("weft's sessions are not as the test waits for after 10 s: %+v", sessions)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// oneSession is ready when weft holds one session of n messages.
func oneSession(n int) func([]listedSession) bool {
	return func(s []listedSession) bool { return len(s) == 1 && s[0].MessageCount == n }
}

// storedMessage is a stored message as get_message_range view=raw gives
// it, as far as the test reads it.
type storedMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func storedMessages(t *testing.T, db, session string, n int) []storedMessage {
	t.Helper()
	var out struct {
		Messages []storedMessage `json:"messages"`
	}
	b := weftRun(t, "--db", db, "call", "get_message_range", "session_id="+session, "start_idx=0", fmt.Sprintf("end_idx=%d", n-1), "view=raw", "max_tokens=100000")
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("get_message_range: %v: %.500s", err, b)
	}
	return out.Messages
}

// writeMeasurements writes the file the agent reads in the second turn:
// a tool output of the size that makes a thread long.
func writeMeasurements(t *testing.T, dir string) (string, []string) {
	t.Helper()
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("2026-03-%02d %02d:%02d bucket=api-gw rate=%d/s burst=%d p50=%.1fms p99=%.1fms drops=%d",
			1+i/48, (i/2)%24, (i%2)*30, 800+i*3, 200+i%50, 2.5+float64(i%7)/10, 9.0+float64(i%13), i%5))
	}
	path := filepath.Join(dir, "measurements.txt")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

// body is a request body's top-level fields.
func body(t *testing.T, ex exchange) map[string]json.RawMessage {
	t.Helper()
	var f map[string]json.RawMessage
	if err := json.Unmarshal(ex.Request, &f); err != nil {
		t.Fatalf("%s %s: the body is not a JSON object: %.300s", ex.Method, ex.Path, ex.Request)
	}
	return f
}

// bodyMessages are a body's messages, each as sent.
func bodyMessages(t *testing.T, f map[string]json.RawMessage) []json.RawMessage {
	t.Helper()
	var msgs []json.RawMessage
	if err := json.Unmarshal(f["messages"], &msgs); err != nil {
		t.Fatalf("messages: %v", err)
	}
	return msgs
}

// TestLoopClaudeCode puts weft between Claude Code and its model, as the
// README's two lines do: weft serve in front of the stand-in API, Claude
// Code's ANTHROPIC_BASE_URL at weft. Two turns make one session in weft;
// the operator digests the second turn with weft call; the next turn's
// requests reach the stand-in with the summary in place of that turn and
// every other field as Claude Code sent it, while Claude Code's own
// transcript keeps everything. Then weft writes the session back as a
// Claude Code transcript, and Claude Code resumed on it (a fresh
// CLAUDE_CONFIG_DIR) sends the stand-in the effective thread; what it
// adds is checked and reported.
func TestLoopClaudeCode(t *testing.T) {
	needClaude(t)
	dir := freshLogsDir(t)
	db := filepath.Join(dir, "weft.db")
	rep := &loopReport{name: "loop-claude-code.txt"}
	defer rep.write(t)
	upLog, err := os.Create(filepath.Join(dir, "upstream.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer upLog.Close()
	var readFor map[string]string // a prompt's word -> the file its turn reads
	s := &standIn{Recorder: rig.Recorder{Log: upLog}, thinks: true,
		say: func(req messagesRequest) string { return loopAnswer(lastUserText(req)) },
		plan: func(req messagesRequest) []call {
			for word, path := range readFor {
				if strings.Contains(lastUserText(req), word) {
					return []call{{tool: "Read", input: map[string]any{"file_path": path}}}
				}
			}
			return nil
		},
	}
	up := httptest.NewServer(s)
	defer up.Close()
	base, _ := serveWeft(t, dir, db, "", "--upstream-anthropic", up.URL)
	tap := newClientTap(t, base, filepath.Join(dir, "client.jsonl"))
	c := newLoopClaude(t, dir, "home", tap.url)
	notes, lines := writeMeasurements(t, c.work)
	gateway := filepath.Join(c.work, "gateway.md")
	if err := os.WriteFile(gateway, []byte(gatewayMD), 0o644); err != nil {
		t.Fatal(err)
	}
	readFor = map[string]string{"measurements.txt": notes, "gateway.md": gateway}

	// Two turns through weft, the second resumed by Claude Code from its
	// transcript and reading a file.
	r1 := c.run(t, loopAsk1)
	r2 := c.run(t, loopAsk2, "--resume", r1.output.SessionID, "--allowedTools", "Read")
	for _, r := range []struct {
		run loopRun
		ask string
	}{{r1, loopAsk1}, {r2, loopAsk2}} {
		if r.run.output.Result != loopAnswer(r.ask) || r.run.output.SessionID != r1.output.SessionID {
			t.Fatalf("claude -p %q: result %q in session %s, want %q in %s", r.ask, r.run.output.Result, r.run.output.SessionID, loopAnswer(r.ask), r1.output.SessionID)
		}
	}
	_, results, _, problems := s.snapshot()
	if len(problems) > 0 || len(results) != 1 || !strings.Contains(results[0].text, lines[299]) {
		t.Fatalf("the Read of measurements.txt: problems %v, results %+v", problems, results)
	}
	// The question, Claude Code's environment (a system turn), the
	// answer; the second question, the call, its result, the answer.
	sessions := settledSessions(t, db, oneSession(7))
	if sessions[0].Source != "proxy" || sessions[0].Proxy == nil || sessions[0].Proxy.Requests != 3 {
		t.Fatalf("weft's sessions after two turns (3 requests): %+v, want one, of the proxy", sessions)
	}
	sid := sessions[0].SessionID
	stored := storedMessages(t, db, sid, sessions[0].MessageCount)
	roles := make([]string, len(stored))
	for i, m := range stored {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, " "); got != "user system assistant user assistant tool assistant" ||
		!strings.Contains(stored[0].Content, loopAsk1) || stored[3].Content != loopAsk2 || !strings.Contains(stored[5].Content, lines[0]) || stored[6].Content != loopAnswer(loopAsk2) {
		t.Fatalf("the session holds %s:\n%+v", got, stored)
	}
	rep.add("two turns of claude -p (the second --resume, reading measurements.txt; every answer opens with a thinking block and its signature):")
	rep.add("  one session in weft, %s, %d messages: %s", sid, len(stored), strings.Join(roles, " "))

	// The operator digests the second turn through the running weft.
	weftRun(t, "--db", db, "call", "digest_messages", "session_id="+sid, "start_idx=3", "end_idx=6", "summary="+loopSummary)
	before := len(tap.requests("/v1/messages"))
	r3 := c.run(t, loopAsk3, "--continue", "--allowedTools", "Read")
	if r3.output.Result != loopAnswer(loopAsk3) || r3.output.SessionID != r1.output.SessionID {
		t.Fatalf("turn 3: result %q in %s", r3.output.Result, r3.output.SessionID)
	}
	sent, got := tap.requests("/v1/messages"), upstreamRequests(s)
	if len(sent) != before+2 || len(got) != len(sent) {
		t.Fatalf("turn 3 (a Read, then the answer): Claude Code sent %d requests in all, the stand-in got %d; want %d each", len(sent), len(got), before+2)
	}
	for k := before; k < len(sent); k++ {
		checkDigested(t, sent[k], got[k], 3, 6, lines)
	}
	sessions = settledSessions(t, db, oneSession(11))
	if sessions[0].Proxy == nil || sessions[0].OpCount != 1 {
		t.Fatalf("weft's sessions after turn 3: %+v, want the one, with its digest", sessions)
	}
	st := sessions[0].Proxy
	cm, um := body(t, sent[len(sent)-1])["messages"], body(t, got[len(got)-1])["messages"]
	rep.add("digest of the second turn (items 3-6: the question, the Read, its 300-line result, the answer) with weft call")
	rep.add("turn 3 (--continue, reading gateway.md): both its requests reach the stand-in with a system turn holding the summary in place of items 3-6,")
	rep.add("  every other message and field as Claude Code sent it (its per-turn output_config on its environment turn too)")
	rep.add("tokens saved on the last request (weft's count of its messages): %d -> %d (%.0f%% fewer); bytes of its messages: %d -> %d; whole body: %d -> %d",
		st.RawTokens, st.SentTokens, 100*(1-float64(st.SentTokens)/float64(st.RawTokens)), len(cm), len(um), len(sent[len(sent)-1].Request), len(got[len(got)-1].Request))

	// Claude Code's own transcript still has everything.
	transcript := claudeTranscript(t, c.home, r1.output.SessionID)
	for _, want := range []string{loopAsk1, loopAsk2, lines[0], lines[299], loopAnswer(loopAsk2), loopAsk3, loopAnswer(loopAsk3)} {
		if !bytes.Contains(transcript, []byte(jsonText(want))) {
			t.Errorf("Claude Code's transcript lacks %q", want)
		}
	}
	rep.add("Claude Code's own transcript still holds the digested turn whole (its 300 lines too)")

	testWriteBack(t, dir, db, sid, tap, s, rep)
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// claudeTranscript is Claude Code's transcript of a session under home.
func claudeTranscript(t *testing.T, home, session string) []byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", session+".jsonl"))
	if len(paths) != 1 {
		t.Fatalf("Claude Code's transcript of %s: found %v", session, paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upstreamRequests are the Messages API requests the stand-in got.
func upstreamRequests(s *standIn) []exchange {
	exchanges := s.Exchanges()
	var out []exchange
	for _, ex := range exchanges {
		if ex.Path == "/v1/messages" {
			out = append(out, ex)
		}
	}
	return out
}

// checkDigested checks one request of the turn after the digest: what
// Claude Code sent (sent) against what reached the stand-in (got). Every
// field but messages goes byte for byte; the messages are Claude Code's
// with those of items start..end (the request's messages at those
// places) replaced by one system turn holding the summary.
func checkDigested(t *testing.T, sent, got exchange, start, end int, lines []string) {
	t.Helper()
	sf, gf := body(t, sent), body(t, got)
	for k, v := range sf {
		if k != "messages" && !bytes.Equal(v, gf[k]) {
			t.Errorf("%s changed on the way:\nClaude Code: %.300s\nstand-in:    %.300s", k, v, gf[k])
		}
	}
	for k := range gf {
		if _, ok := sf[k]; !ok {
			t.Errorf("the stand-in got a field %s Claude Code did not send", k)
		}
	}
	sm, gm := bodyMessages(t, sf), bodyMessages(t, gf)
	if len(gm) != len(sm)-(end-start) {
		t.Fatalf("the stand-in got %d messages, want %d: Claude Code's %d with %d-%d as one", len(gm), len(sm)-(end-start), len(sm), start, end)
	}
	want := append(append(append([]json.RawMessage{}, sm[:start]...), json.RawMessage(fmt.Sprintf(`{"role":"system","content":%q}`, loopSummary))), sm[end+1:]...)
	for i := range gm {
		if !sameMessage(gm[i], want[i]) {
			t.Errorf("message %d at the stand-in:\n%.600s\nwant (as Claude Code sent it, or the summary):\n%.600s", i, gm[i], want[i])
		}
	}
	all := string(sent.Request)
	for _, gone := range []string{jsonText(loopAsk2), jsonText(lines[0]), jsonText(loopAnswer(loopAsk2))} {
		if !strings.Contains(all, gone) {
			t.Errorf("Claude Code's request lacks %q: the test's premise", gone)
		}
		if strings.Contains(string(got.Request), gone) {
			t.Errorf("the stand-in got %q, which the digest covers", gone)
		}
	}
}

// sameMessage reports whether two Messages API messages say the same:
// the same role, fields and blocks, a string content being one text
// block. weft writes a message it sends anew from what it stored, so the
// form may differ (a string as a block, the fields' order), not what it
// says.
func sameMessage(a, b json.RawMessage) bool {
	return sameJSON(canonicalMessage(a), canonicalMessage(b))
}

func canonicalMessage(raw json.RawMessage) []byte {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if s, ok := m["content"].(string); ok {
		m["content"] = []any{map[string]any{"type": "text", "text": s}}
	}
	if blocks, ok := m["content"].([]any); ok {
		for _, b := range blocks {
			if blk, ok := b.(map[string]any); ok && blk["type"] == "tool_result" {
				if s, ok := blk["content"].(string); ok {
					blk["content"] = []any{map[string]any{"type": "text", "text": s}}
				}
			}
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// loopReport collects what a loop test saw, for its file in the logs.
type loopReport struct {
	name  string
	lines []string
}

func (r *loopReport) add(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *loopReport) write(t *testing.T) {
	text := strings.Join(r.lines, "\n") + "\n"
	t.Log("\n" + text)
	if root := os.Getenv(logsEnv); root != "" && !t.Failed() {
		if err := os.WriteFile(filepath.Join(root, r.name), []byte(text), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// labelLine is the label line weft's Claude Code writer puts before a
// system message or a summary written as a user record, and
// assemble_context's "[system] " prefix.
var labelLine = regexp.MustCompile(`^\[(system|summary of [^\]\n]*)\][ \n]`)

// testWriteBack writes the digested session back as a Claude Code
// transcript, resumes it in Claude Code with a configuration of its own,
// and compares what reached the stand-in with assemble_context.
func testWriteBack(t *testing.T, dir, db, sid string, tap *clientTap, s *standIn, rep *loopReport) {
	t.Helper()
	c := newLoopClaude(t, dir, "home-resumed", tap.url)
	project := c.work
	cmd := exec.CommandContext(t.Context(), weftBinary(t), "--db", db, "export", "--format", "claude-code", "--project", project, sid)
	cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+filepath.Join(c.home, ".claude"))
	out, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`claude --resume ([0-9a-f-]{36})`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("weft export --format claude-code --project: %v\n%s", err, out)
	}
	id := string(m[1])
	var assembled struct {
		Anthropic struct {
			System   string            `json:"system"`
			Messages []json.RawMessage `json:"messages"`
		} `json:"anthropic"`
	}
	if err := json.Unmarshal(weftRun(t, "--db", db, "call", "assemble_context", "session_id="+sid, "format=anthropic", "max_tokens=0"), &assembled); err != nil {
		t.Fatal(err)
	}
	before := len(tap.requests("/v1/messages"))
	r := c.run(t, loopAsk4, "--resume", id)
	if r.output.Result != loopAnswer(loopAsk4) || r.output.SessionID != id {
		t.Fatalf("claude -p --resume %s: result %q in %s", id, r.output.Result, r.output.SessionID)
	}
	sent, got := tap.requests("/v1/messages"), upstreamRequests(s)
	if len(sent) != before+1 || len(got) != len(sent) {
		t.Fatalf("the resumed turn: %d requests, the stand-in got %d in all (want one more, %d)", len(sent)-before, len(got), before+1)
	}
	// A thread weft did not start goes upstream as it came.
	if !bytes.Equal(sent[before].Request, got[before].Request) {
		t.Errorf("weft changed the resumed request on its way")
	}
	gm := bodyMessages(t, body(t, got[before]))
	want := assembled.Anthropic.Messages
	if assembled.Anthropic.System != "" {
		t.Fatalf("the thread opens with a summary (%q): the test expects it to open with the first question", assembled.Anthropic.System)
	}
	if len(gm) != len(want)+3 {
		t.Fatalf("the stand-in got %d messages; want the %d of assemble_context and Claude Code's three (its per-turn settings, the new question, its environment):\n%s", len(gm), len(want), got[before].Request)
	}
	// Claude Code puts its per-turn output_config on the first system
	// turn of the conversation; the thread written back has none (a
	// system message is a user record there), so it sends an empty one
	// after the first message.
	var perTurn struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
		Output  json.RawMessage   `json:"output_config"`
	}
	if json.Unmarshal(gm[1], &perTurn); perTurn.Role != "system" || len(perTurn.Content) != 0 || len(perTurn.Output) == 0 {
		t.Errorf("message 1: %s, want Claude Code's empty system turn with its output_config", gm[1])
	} else {
		gm = append(gm[:1:1], gm[2:]...)
	}
	// What Claude Code adds: the new question, after the attribution
	// reminder it puts in every first message of a run, and a system
	// turn with its environment (the new project folder).
	q, env := textsOf(gm[len(want)]), textsOf(gm[len(want)+1])
	if q.role != "user" || len(q.texts) != 2 || !strings.HasPrefix(q.texts[0], "<system-reminder>") || q.texts[1] != loopAsk4 {
		t.Errorf("the new question: %s", gm[len(want)])
	}
	if env.role != "system" || len(env.texts) != 1 || !strings.HasPrefix(env.texts[0], "# Environment") || !strings.Contains(env.texts[0], project) {
		t.Errorf("the environment turn: %.300s", gm[len(want)+1])
	}
	// The rest is the effective thread, told apart only by the labels
	// of system messages and summaries (the writer's "[system]" and
	// "[summary of N messages, span]" lines; assemble_context's "[system] ")
	// and by the newline Claude Code ends a user record with when it puts
	// it together with the next.
	var labels, newlines int
	for i := range want {
		a, b := textsOf(gm[i]), textsOf(want[i])
		same := a.role == b.role && len(a.texts) == len(b.texts) && sameJSON(a.other, b.other)
		for k := 0; same && k < len(a.texts); k++ {
			x, y := a.texts[k], b.texts[k]
			if lx, ly := labelLine.FindString(x), labelLine.FindString(y); lx != "" && ly != "" {
				x, y = x[len(lx):], y[len(ly):]
				labels++
			}
			if x != y && x == y+"\n" {
				x = y
				newlines++
			}
			same = x == y
		}
		if !same {
			t.Errorf("message %d at the stand-in:\n%.600s\nassemble_context:\n%.600s", i, gm[i], want[i])
		}
	}
	rep.add("weft export --format claude-code --project DIR, then claude -p --resume ID (a fresh CLAUDE_CONFIG_DIR, cwd DIR): the stand-in got")
	rep.add("  assemble_context format=anthropic's %d messages (a Read and its result among them), the same but for %d labels of system", len(want), labels)
	rep.add("  messages and summaries (the writer's \"[system]\"/\"[summary of N messages, span]\" lines, assemble_context's \"[system] \")")
	rep.add("  and %d newlines Claude Code ends a user record with when it joins it to the next. Claude Code adds three messages: after the", newlines)
	rep.add("  first, an empty system turn carrying its per-turn output_config %s; at the end, the question after its", perTurn.Output)
	rep.add("  <system-reminder> on commit attribution, and a system turn with its environment (cwd DIR, a cache breakpoint)")
}

// messageTexts is a message's role, the text of each text block (a
// string content is one), and its other blocks as JSON.
type messageTexts struct {
	role  string
	texts []string
	other []byte
}

func textsOf(raw json.RawMessage) messageTexts {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(canonicalMessage(raw), &m)
	out := messageTexts{role: m.Role}
	var rest []any
	for _, b := range blocks(m.Content) {
		if b.Type == "text" {
			out.texts = append(out.texts, b.Text)
			continue
		}
		var v any
		raw, _ := json.Marshal(b)
		json.Unmarshal(raw, &v)
		rest = append(rest, v)
	}
	out.other, _ = json.Marshal(rest)
	return out
}
