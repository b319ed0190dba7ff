package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/e2e/internal/rig"
	"weft/internal/tokens"
)

// The long session of TestLoopClaudeCodeInBudget: four prompts, each a
// batch of twelve tool rounds (Claude Code's Bash running cat on a log,
// its Read on a source file), over files of 2 to 30 KB: 52 requests,
// about 200,000 tokens of tool output in all, through weft serve with a
// memory policy of a 20,000-token budget for the sessions it proxies.
const (
	budgetTokens  = 20000
	budgetBatches = 4
	budgetCalls   = 12 // tool rounds in a batch
	// budgetModel is the small model the policy names for its
	// summaries.
	budgetModel = "stand-in-small"
	// summaryAsk is in the instructions weft's summarizer sends.
	summaryAsk = "Summarize this part of a conversation"
)

// budgetPrompt is the prompt of batch b.
func budgetPrompt(b int) string {
	return fmt.Sprintf("Go through batch %d: its logs and sources, one by one.", b)
}

// budgetDone is the stand-in's answer when batch b's rounds are done.
func budgetDone(b int) string { return fmt.Sprintf("stand-in: batch %d done", b) }

// budgetFile is the file round k of batch b reads, relative to the
// project folder, and its size: a log (Bash, cat) on even rounds, a
// source file (Read) on odd ones; 2 to 30 KB, the first line a marker.
func budgetFile(b, k int) (string, int) {
	size := (2 + (b*budgetCalls+k)*7%29) << 10
	if k%2 == 0 {
		return fmt.Sprintf("logs/b%d_%02d.log", b, k), size
	}
	return fmt.Sprintf("src/b%d_%02d.go", b, k), size
}

// budgetMarker is the first line of round k of batch b's file.
func budgetMarker(b, k int) string { return fmt.Sprintf("MARK-b%d-r%02d", b, k) }

// writeBudgetFiles writes every batch's files into the project folder:
// logs of requests and Go source, text that counts as such text does.
func writeBudgetFiles(t *testing.T, work string) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(7, 11))
	paths := []string{"/api/v1/items", "/api/v1/tenants", "/healthz", "/api/v2/search", "/api/v1/orders"}
	for b := 1; b <= budgetBatches; b++ {
		for k := range budgetCalls {
			name, size := budgetFile(b, k)
			var sb strings.Builder
			sb.WriteString(budgetMarker(b, k) + "\n")
			for line := 1; sb.Len() < size; line++ {
				if k%2 == 0 {
					fmt.Fprintf(&sb, "2026-11-%02d 10:%02d:%02d.%03d req=%08x tenant=acme-%02d %s %s/%d status=%d latency=%.1fms bytes=%d\n",
						1+b, line/60%60, line%60, rnd.IntN(1000), rnd.Uint32(), rnd.IntN(40),
						[]string{"GET", "POST", "PUT"}[rnd.IntN(3)], paths[rnd.IntN(len(paths))], rnd.IntN(9000),
						[]int{200, 200, 200, 201, 404, 429, 500}[rnd.IntN(7)], rnd.Float64()*80, rnd.IntN(60000))
				} else {
					fmt.Fprintf(&sb, "func (b *Bucket%d) step%d(now time.Time) int {\n\tb.tokens = min(b.cap, b.tokens+int(now.Sub(b.last)/b.every)) // %d\n\treturn b.tokens - %d\n}\n",
						k, line, rnd.IntN(1000), rnd.IntN(50))
				}
			}
			path := filepath.Join(work, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(sb.String()[:size]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// budgetAgent is the Messages API's stand-in for a long agentic session:
// it answers a prompt naming batch b with its first tool round, the
// result of round k with round k+1, the last round's result with
// budgetDone(b). What round comes next it reads off the request's last
// message alone, so a thread weft has digested (earlier rounds in a
// summary) goes on where it was. It writes the summaries weft asks for,
// too.
type budgetAgent struct {
	work string // the project folder, for Read's absolute paths

	rig.Recorder
	answered atomic.Int64

	mu        sync.Mutex
	summaries []summaryAsked
	problems  []string
}

// summaryAsked is a summary weft's summarizer asked the stand-in for.
type summaryAsked struct {
	model, key string
	markers    []string // the rounds the transcript held
}

func (a *budgetAgent) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ex := rig.NewExchange(r, body)
	key := ex.Headers.Get("X-Api-Key")
	ex.Headers.Del("X-Api-Key")
	ex.Headers.Del("Authorization")
	w := &answerCopy{ResponseWriter: rw}
	defer func() { ex.Answer = w.body.String(); a.Record(ex) }()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		ex.Status, ex.Answered = http.StatusOK, "count_tokens"
		writeJSON(w, http.StatusOK, map[string]int{"input_tokens": len(body) / 4})
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		ex.Status, ex.Answered = http.StatusNotFound, "404"
		writeError(w, http.StatusNotFound, "not_found_error", "the stand-in serves POST /v1/messages and /v1/messages/count_tokens only")
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		ex.Status, ex.Answered = http.StatusBadRequest, "invalid request"
		writeError(w, http.StatusBadRequest, "invalid_request_error", "the stand-in could not read the request: "+err.Error())
		return
	}
	var rep reply
	if isSummaryRequest(body) {
		rep = reply{text: a.summarize(req, key)}
	} else {
		rep = a.next(req)
	}
	rep.msgID = fmt.Sprintf("msg_budget_%03d", a.answered.Add(1))
	ex.Status, ex.Answered = http.StatusOK, rep.summary()
	if req.Stream {
		rep.stream(w, req.Model)
	} else {
		writeJSON(w, http.StatusOK, rep.message(req.Model))
	}
}

// isSummaryRequest reports whether a request is weft's summarizer's: its
// system prompt, a string, asks for a summary.
func isSummaryRequest(body []byte) bool {
	var f struct {
		System json.RawMessage `json:"system"`
	}
	if json.Unmarshal(body, &f) != nil || len(f.System) == 0 || f.System[0] != '"' {
		return false
	}
	var s string
	return json.Unmarshal(f.System, &s) == nil && strings.Contains(s, summaryAsk)
}

// summarize writes a summary of the transcript a summary request
// carries: the rounds it names, as a person summing up would.
func (a *budgetAgent) summarize(req messagesRequest, key string) string {
	var text strings.Builder
	for _, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			text.WriteString(b.Text)
		}
	}
	var marks []string
	for b := 1; b <= budgetBatches; b++ {
		for k := range budgetCalls {
			if strings.Contains(text.String(), budgetMarker(b, k)) {
				marks = append(marks, budgetMarker(b, k))
			}
		}
	}
	a.mu.Lock()
	a.summaries = append(a.summaries, summaryAsked{model: req.Model, key: key, markers: marks})
	a.mu.Unlock()
	if len(marks) == 0 {
		return "The agent worked through logs and sources; nothing of note."
	}
	return fmt.Sprintf("The agent read %d files (%s): request logs of the api-gw tenants and the Bucket sources; nothing failed.", len(marks), strings.Join(marks, ", "))
}

// next is the agent's next round for the conversation req carries.
func (a *budgetAgent) next(req messagesRequest) reply {
	if len(req.Tools) == 0 || len(req.Messages) == 0 {
		return reply{text: "stand-in: noted"} // a request of Claude Code's own (a title)
	}
	// The last message from the user: Claude Code may send system
	// messages after it (a reminder to keep the user posted).
	last := req.Messages[len(req.Messages)-1]
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == "user" {
			last = m
			break
		}
	}
	for _, bl := range blocks(last.Content) {
		var b, k int
		if bl.Type != "tool_result" {
			continue
		}
		if _, err := fmt.Sscanf(bl.ToolUseID, toolUsePrefix+"b%d_%d", &b, &k); err != nil {
			continue
		}
		if k+1 < budgetCalls {
			return a.round(req, b, k+1)
		}
		return reply{text: budgetDone(b)}
	}
	for b := 1; b <= budgetBatches; b++ {
		if strings.Contains(lastUserText(req), budgetPrompt(b)) {
			return a.round(req, b, 0)
		}
	}
	a.problem(fmt.Sprintf("a request whose last message is neither a prompt of a batch nor a round's result: %.300s", last.Content))
	return reply{text: "stand-in: lost"}
}

// round is the tool call of round k of batch b.
func (a *budgetAgent) round(req messagesRequest, b, k int) reply {
	name, _ := budgetFile(b, k)
	tool, input := "Bash", map[string]any{"command": "cat " + name, "description": "Show " + name}
	if k%2 == 1 {
		tool, input = "Read", map[string]any{"file_path": filepath.Join(a.work, name)}
	}
	if !slices.ContainsFunc(req.Tools, func(t struct {
		Name string `json:"name"`
	}) bool {
		return t.Name == tool
	}) {
		a.problem("the request offers no tool " + tool)
		return reply{text: "stand-in: no " + tool}
	}
	in, _ := json.Marshal(input)
	return reply{tool: tool, id: fmt.Sprintf("%sb%d_%02d", toolUsePrefix, b, k), input: in}
}

func (a *budgetAgent) problem(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.problems = append(a.problems, p)
}

// agentRequests are the conversation's requests among exchanges (those
// with tools), in the order they were made; summaries and Claude Code's
// own small requests left out.
func agentRequests(exchanges []exchange) []exchange {
	var out []exchange
	for _, ex := range exchanges {
		if ex.Path != "/v1/messages" || isSummaryRequest(ex.Request) {
			continue
		}
		var req messagesRequest
		if json.Unmarshal(ex.Request, &req) == nil && len(req.Tools) > 0 {
			out = append(out, ex)
		}
	}
	slices.SortStableFunc(out, func(a, b exchange) int { return a.Time.Compare(b.Time) })
	return out
}

// threadTokens counts a request's messages as weft counts a thread: the
// text of each block (a call's name and input, a result's text).
func threadTokens(t *testing.T, ex exchange) int {
	t.Helper()
	var req messagesRequest
	if err := json.Unmarshal(ex.Request, &req); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			switch b.Type {
			case "text":
				n += tokens.Count(b.Text)
			case "tool_use":
				n += tokens.Count(b.Name) + tokens.Count(string(b.Input))
			case "tool_result":
				n += tokens.Count(blockText(b.Content))
			}
		}
	}
	return n
}

// pairProblem says what is wrong with a request's tool_use/tool_result
// pairs: each call's results in the message after it, each result after
// its call; "" if nothing.
func pairProblem(t *testing.T, ex exchange) string {
	t.Helper()
	var req messagesRequest
	if err := json.Unmarshal(ex.Request, &req); err != nil {
		t.Fatal(err)
	}
	for i, m := range req.Messages {
		var calls, results []string
		for _, b := range blocks(m.Content) {
			switch b.Type {
			case "tool_use":
				calls = append(calls, b.ID)
			case "tool_result":
				results = append(results, b.ToolUseID)
			}
		}
		if len(results) > 0 {
			var before []string
			if i > 0 && req.Messages[i-1].Role == "assistant" {
				for _, b := range blocks(req.Messages[i-1].Content) {
					if b.Type == "tool_use" {
						before = append(before, b.ID)
					}
				}
			}
			for _, id := range results {
				if !slices.Contains(before, id) {
					return fmt.Sprintf("message %d: a result of %s, which the message before does not call", i, id)
				}
			}
		}
		if len(calls) == 0 {
			continue
		}
		var after []string
		if i+1 < len(req.Messages) {
			for _, b := range blocks(req.Messages[i+1].Content) {
				if b.Type == "tool_result" {
					after = append(after, b.ToolUseID)
				}
			}
		} else {
			return fmt.Sprintf("message %d: calls %v, and the thread ends there", i, calls)
		}
		for _, id := range calls {
			if !slices.Contains(after, id) {
				return fmt.Sprintf("message %d: a call %s whose result is not in the message after it", i, id)
			}
		}
	}
	return ""
}

// cacheFree is a request's messages, each without its cache_control
// marks (the client moves its breakpoint to the newest block on every
// request): what the prompt cache's prefix is made of.
func cacheFree(t *testing.T, ex exchange) []string {
	t.Helper()
	msgs := bodyMessages(t, body(t, ex))
	out := make([]string, len(msgs))
	for i, m := range msgs {
		var v any
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(dropKey(v, "cache_control"))
		out[i] = string(b)
	}
	return out
}

func dropKey(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, key)
		for k, x := range v {
			v[k] = dropKey(x, key)
		}
	case []any:
		for i, x := range v {
			v[i] = dropKey(x, key)
		}
	}
	return v
}

// lastMarked reports whether a request's newest block (the last block
// of its last message) carries a cache_control mark.
func lastMarked(t *testing.T, ex exchange) bool {
	t.Helper()
	msgs := bodyMessages(t, body(t, ex))
	if len(msgs) == 0 {
		return false
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msgs[len(msgs)-1], &m) != nil || len(m.Content) == 0 || m.Content[0] != '[' {
		return false
	}
	var bl []map[string]json.RawMessage
	if json.Unmarshal(m.Content, &bl) != nil || len(bl) == 0 {
		return false
	}
	_, ok := bl[len(bl)-1]["cache_control"]
	return ok
}

// extends reports whether thread b is thread a and more.
func extends(a, b []string) bool {
	return len(b) >= len(a) && slices.Equal(a, b[:len(a)])
}

// listedOp is an operation as list_operations gives it.
type listedOp struct {
	ID            string    `json:"operation_id"`
	Type          string    `json:"op_type"`
	Author        string    `json:"author"`
	Rule          string    `json:"rule"`
	Active        bool      `json:"active"`
	CreatedAt     time.Time `json:"created_at"`
	SummarySource string    `json:"summary_source"`
	SummaryModel  string    `json:"summary_model"`
}

// TestLoopClaudeCodeInBudget is weft keeping a live agent's thread in
// budget by itself: Claude Code, its model API at weft serve, works
// through four batches of tool rounds (48 tool outputs of 2 to 30 KB,
// 52 requests) under a memory policy of 20,000 tokens for the sessions
// weft proxies, the summaries written by the stand-in itself with the
// small model the policy names. Every request that reaches the
// stand-in is within the budget; its tool_use/tool_result pairs are
// whole; between the policy's compactions each request's thread is the
// one before and what is new, byte for byte (the client's cache_control
// marks aside, which it moves itself), so the prompt cache's prefix
// breaks only where the policy changed the thread; at most four
// cache_control marks reach the stand-in. Claude Code's own transcript
// keeps every tool output whole.
func TestLoopClaudeCodeInBudget(t *testing.T) {
	needClaude(t)
	dir := filepath.Join(logsDir(t), "budget")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "weft.db")
	rep := &loopReport{name: "loop-claude-code-budget.txt"}
	defer rep.write(t)
	upLog, err := os.Create(filepath.Join(dir, "upstream.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer upLog.Close()

	// The policy for the sessions the proxy starts, set before weft
	// serve holds the file.
	weftRun(t, "--db", db, "memory", "--scope", "proxied",
		fmt.Sprintf("budget_tokens=%d", budgetTokens), "tool_output_min_tokens=1000", "tool_output_older_than_turns=1",
		"summarizer=upstream", "model="+budgetModel)

	s := &budgetAgent{Recorder: rig.Recorder{Log: upLog}}
	up := httptest.NewServer(s)
	defer up.Close()
	base, _ := serveWeft(t, dir, db, "", "--upstream-anthropic", up.URL)
	tap := newClientTap(t, base, filepath.Join(dir, "client.jsonl"))
	c := newLoopClaude(t, dir, "home", tap.url)
	s.work = c.work
	writeBudgetFiles(t, c.work)

	start := time.Now()
	var first loopRun
	for b := 1; b <= budgetBatches; b++ {
		flags := []string{"--allowedTools", "Bash,Read"}
		if b > 1 {
			flags = append(flags, "--continue")
		}
		r := c.run(t, budgetPrompt(b), flags...)
		if b == 1 {
			first = r
		}
		if r.output.Result != budgetDone(b) || r.output.SessionID != first.output.SessionID {
			t.Fatalf("batch %d: result %q in session %s, want %q in %s", b, r.output.Result, r.output.SessionID, budgetDone(b), first.output.SessionID)
		}
	}
	took := time.Since(start)
	s.mu.Lock()
	problems := slices.Clone(s.problems)
	s.mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("the stand-in could not follow the session: %v", problems)
	}

	sent, got := agentRequests(tap.sent), agentRequests(s.Exchanges())
	want := budgetBatches * (budgetCalls + 1)
	if len(sent) != want || len(got) != want {
		t.Fatalf("Claude Code sent %d requests of the session, the stand-in got %d; want %d each", len(sent), len(got), want)
	}
	// Each batch: its prompt, twelve calls and their results, the answer.
	stored := budgetBatches * (2*budgetCalls + 2)
	sessions := settledSessions(t, db, func(s []listedSession) bool { return len(s) == 1 && s[0].MessageCount >= stored })
	sid := sessions[0].SessionID
	var listed struct {
		Operations []listedOp `json:"operations"`
	}
	if err := json.Unmarshal(weftRun(t, "--db", db, "call", "list_operations", "session_id="+sid, "max_tokens=100000"), &listed); err != nil {
		t.Fatal(err)
	}
	var memOps []listedOp
	for _, op := range listed.Operations {
		if op.Author == "memory" {
			memOps = append(memOps, op)
		}
	}

	// Every request within the budget, its pairs whole, at most four
	// cache_control marks.
	rawMax, sentMax, rawTotal, sentTotal := 0, 0, 0, 0
	for i := range got {
		raw, out := threadTokens(t, sent[i]), threadTokens(t, got[i])
		rawTotal += raw
		sentTotal += out
		rawMax, sentMax = max(rawMax, raw), max(sentMax, out)
		if out > budgetTokens {
			t.Errorf("request %d reached the stand-in with %d tokens of thread, past the budget of %d (Claude Code sent %d)", i+1, out, budgetTokens, raw)
		}
		if p := pairProblem(t, got[i]); p != "" {
			t.Errorf("request %d: %s", i+1, p)
		}
		if n := bytes.Count(got[i].Request, []byte(`"cache_control"`)); n > 4 {
			t.Errorf("request %d: %d cache_control marks reached the stand-in, at most 4 are allowed", i+1, n)
		}
		if lastMarked(t, sent[i]) && !lastMarked(t, got[i]) {
			t.Errorf("request %d: Claude Code marked its newest block for the cache, and the stand-in got it unmarked", i+1)
		}
	}
	if rawMax <= budgetTokens {
		t.Fatalf("Claude Code's thread never passed the budget (at most %d tokens): the session tests nothing", rawMax)
	}

	// The prefix breaks only where the policy changed the thread (a
	// memory operation made between the two requests).
	breaks, clientBreaks := 0, 0
	for i := 1; i < len(got); i++ {
		if !extends(cacheFree(t, sent[i-1]), cacheFree(t, sent[i])) {
			clientBreaks++
			continue // Claude Code changed its own thread
		}
		if extends(cacheFree(t, got[i-1]), cacheFree(t, got[i])) {
			continue
		}
		breaks++
		// Made after weft had request i-1 from Claude Code (it may land
		// while that request is on its way up), before the stand-in got
		// request i.
		if !slices.ContainsFunc(memOps, func(op listedOp) bool {
			return op.CreatedAt.After(sent[i-1].Time) && !op.CreatedAt.After(got[i].Time)
		}) {
			t.Errorf("request %d's thread is not request %d's and more, and the policy made no operation between them", i+1, i)
		}
	}
	if breaks == 0 {
		t.Errorf("no compaction broke the prefix in %d requests past the budget", len(got))
	}

	// The summaries: the stand-in's, asked with the client's key for the
	// policy's model.
	s.mu.Lock()
	asked := slices.Clone(s.summaries)
	s.mu.Unlock()
	upstreamMade := 0
	for _, op := range memOps {
		if op.SummarySource == "upstream" {
			upstreamMade++
			if op.SummaryModel != budgetModel {
				t.Errorf("operation %s: summary by model %q, want the policy's %q", op.ID, op.SummaryModel, budgetModel)
			}
		}
	}
	if len(asked) == 0 || upstreamMade == 0 {
		t.Errorf("the stand-in was asked for %d summaries, and %d operations hold one of them", len(asked), upstreamMade)
	}
	for _, a := range asked {
		if a.model != budgetModel || a.key == "" {
			t.Errorf("a summary was asked of model %q with key %q: want the policy's model and the client's key", a.model, a.key)
		}
	}

	// Claude Code's own transcript has every tool output whole.
	transcript := claudeTranscript(t, c.home, first.output.SessionID)
	for b := 1; b <= budgetBatches; b++ {
		for k := range budgetCalls {
			if !bytes.Contains(transcript, []byte(budgetMarker(b, k))) {
				t.Errorf("Claude Code's transcript lacks round %d of batch %d", k, b)
			}
		}
	}

	rules := map[string]int{}
	for _, op := range memOps {
		rules[op.Type+" ("+op.Rule+")"]++
	}
	rep.add("Claude Code through weft serve with a memory policy of %d tokens (budget_tokens) for the sessions it proxies:", budgetTokens)
	rep.add("  %d batches of %d tool rounds (Bash cat of a log, Read of a source; files of 2-30 KB): %d requests in %s", budgetBatches, budgetCalls, len(got), took.Round(time.Second))
	rep.add("  thread tokens per request, as Claude Code sent them: at most %d, %d in all", rawMax, rawTotal)
	rep.add("  as they reached the stand-in: at most %d, %d in all (%.0f%% fewer)", sentMax, sentTotal, 100*(1-float64(sentTotal)/float64(rawTotal)))
	rep.add("  the policy's operations: %d %v; summaries asked of the stand-in (model %s): %d", len(memOps), rules, budgetModel, len(asked))
	rep.add("  prefix breaks: %d, each where the policy made an operation; Claude Code changed its own thread %d times", breaks, clientBreaks)
	rep.add("  every request's tool_use/tool_result pairs whole; at most 4 cache_control marks, the newest block's kept; Claude Code's transcript holds all %d tool outputs", budgetBatches*budgetCalls)
}
