package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/e2e/internal/rig"
)

// The conversation of TestLoopClaudeCodeRewinds: three questions, then
// the second asked otherwise after a rewind to the first answer.
const (
	rewindAsk1 = "What is a token bucket?"
	rewindAsk2 = "How do I size its burst?"
	rewindAsk3 = "And its refill rate?"
	rewindAlt  = "How does a leaky bucket differ?"
)

// transcriptRecord is a line of Claude Code's transcript, as far as the
// test reads it.
type transcriptRecord struct {
	Type    string `json:"type"`
	UUID    string `json:"uuid"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// TestLoopClaudeCodeRewinds: Claude Code, its model API at weft serve,
// asks three questions in one session; then it is resumed at the answer
// to the first (--resume-session-at, as its rewind does) and asks the
// second otherwise. That request departs from weft's session in the
// middle: weft stores it as a fork of the session at the first answer,
// and leaves the session itself as it was.
func TestLoopClaudeCodeRewinds(t *testing.T) {
	needClaude(t)
	dir := filepath.Join(logsDir(t), "rewind")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "weft.db")
	rep := &loopReport{name: "loop-claude-code-rewind.txt"}
	defer rep.write(t)
	upLog, err := os.Create(filepath.Join(dir, "upstream.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer upLog.Close()
	s := &standIn{Recorder: rig.Recorder{Log: upLog}, say: func(req messagesRequest) string { return loopAnswer(lastUserText(req)) }}
	up := httptest.NewServer(s)
	defer up.Close()
	base, _ := serveWeft(t, dir, db, "", "--upstream-anthropic", up.URL)
	c := newLoopClaude(t, dir, "home", base)

	r1 := c.run(t, rewindAsk1)
	for _, ask := range []string{rewindAsk2, rewindAsk3} {
		if r := c.run(t, ask, "--continue"); r.output.Result != loopAnswer(ask) || r.output.SessionID != r1.output.SessionID {
			t.Fatalf("claude -p %q --continue: %q in %s", ask, r.output.Result, r.output.SessionID)
		}
	}
	sessions := settledSessions(t, db, oneSession(7))
	sid := sessions[0].SessionID

	// The answer to the first question, in Claude Code's transcript.
	var at string
	sc := bufio.NewScanner(bytes.NewReader(claudeTranscript(t, c.home, r1.output.SessionID)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec transcriptRecord
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Type == "assistant" && strings.Contains(string(rec.Message.Content), jsonText(loopAnswer(rewindAsk1))) {
			at = rec.UUID
			break
		}
	}
	if at == "" {
		t.Fatal("Claude Code's transcript holds no answer to the first question")
	}
	r := c.run(t, rewindAlt, "--resume", r1.output.SessionID, "--resume-session-at", at)
	if r.output.Result != loopAnswer(rewindAlt) {
		t.Fatalf("the rewound turn: %q", r.output.Result)
	}
	got := upstreamRequests(s)
	last := string(got[len(got)-1].Request)
	if !strings.Contains(last, jsonText(rewindAsk1)) || strings.Contains(last, jsonText(rewindAsk2)) || !strings.Contains(last, jsonText(rewindAlt)) {
		t.Fatalf("the rewound request is not the first question and the other second one:\n%.2000s", last)
	}

	all := settledSessions(t, db, func(s []listedSession) bool { return len(s) == 2 })
	var source, fork *listedSession
	for i := range all {
		if all[i].SessionID == sid {
			source = &all[i]
		} else {
			fork = &all[i]
		}
	}
	if source == nil || fork == nil || source.MessageCount != 7 {
		t.Fatalf("weft's sessions after the rewind: %+v, want the session as it was and a fork", all)
	}
	if fork.ForkOf == nil || fork.ForkOf.SessionID != sid {
		t.Fatalf("the rewound path's session %+v does not say it is a fork of %s", fork, sid)
	}
	stored := storedMessages(t, db, fork.SessionID, fork.MessageCount)
	texts := make([]string, len(stored))
	for i, m := range stored {
		texts[i] = m.Role + ": " + m.Content
	}
	joined := strings.Join(texts, "\n")
	if !strings.Contains(joined, rewindAsk1) || strings.Contains(joined, rewindAsk2) || !strings.Contains(joined, rewindAlt) {
		t.Fatalf("the fork holds:\n%s", joined)
	}
	rep.add("Claude Code through weft serve: three questions in one session (%s, %d messages in weft);", sid, source.MessageCount)
	rep.add("  claude -p --resume ID --resume-session-at UUID (its rewind to the first answer), the second question asked otherwise:")
	rep.add("  the request departs from the session after message %d: weft stored it as a fork, %s (fork_of %s at %s, index %d), %d messages;",
		fork.ForkOf.Index+1, fork.SessionID, fork.ForkOf.SessionID, fork.ForkOf.At, fork.ForkOf.Index, fork.MessageCount)
	rep.add("  the session itself kept its %d messages", source.MessageCount)
}
