// Package codex drives Codex CLI, OpenAI's coding agent, through weft's
// context proxy: `codex exec` runs offline with weft serve as its model
// provider's base URL, and weft in front of a stand-in for the OpenAI
// Responses API that records every request it gets. The tests run when
// WEFT_CODEX names the codex binary (.ci/codex installs it); the
// stand-in is this file.
package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"weft/e2e/internal/rig"
)

// The stand-in's answers, which the test looks for.
const (
	// checkWord in a user's turn makes the stand-in ask Codex to run
	// checkCommand (a function call of its exec_command tool).
	checkWord    = "TODO"
	checkCommand = "echo weft-codex-check"
	// ranText answers the output of the command.
	ranText = "stand-in: the check ran, no TODO left."
	// notedText starts the answer to any other turn.
	notedText = "stand-in: noted"
	// reasoningText is the summary of the reasoning item that comes
	// before the call, with encrypted content the client must send back.
	reasoningText = "Looking for TODOs with a command."
)

// exchange is one request the stand-in got and what it answered.
type exchange = rig.Exchange

// inputItem is what the stand-in reads of an input item.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
}

// text is a message item's text, its blocks joined.
func (it *inputItem) text() string {
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(it.Content, &blocks)
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n")
}

// responsesRequest is what the stand-in reads of a request body.
type responsesRequest struct {
	Model string      `json:"model"`
	Input []inputItem `json:"input"`
}

// standIn is a small Responses API (POST /v1/responses, streaming): it
// answers a user's turn that mentions checkWord with reasoning and a call
// of exec_command, the call's output with ranText, and any other turn
// with notedText. It keeps every request, and writes each to log.
type standIn struct {
	rig.Recorder
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ex := rig.NewExchange(r, body)
	defer func() { s.Record(ex) }()
	var req responsesRequest
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") || json.Unmarshal(body, &req) != nil || len(req.Input) == 0 {
		ex.Status, ex.Answered = http.StatusNotFound, "404"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `{"error":{"message":"the stand-in answers POST /v1/responses with input only, not %s %s","type":"invalid_request_error","param":null,"code":null}}`, r.Method, r.URL.Path)
		return
	}
	last := req.Input[len(req.Input)-1]
	var items []string
	switch {
	case last.Type == "function_call_output":
		ex.Answered = "text: " + ranText
		items = append(items, messageItem(ranText))
	case last.Role == "user" && strings.Contains(last.text(), checkWord):
		ex.Answered = "function_call exec_command"
		args, _ := json.Marshal(map[string]any{"cmd": checkCommand, "yield_time_ms": 2000})
		items = append(items,
			fmt.Sprintf(`{"type":"reasoning","id":"rs_standin_%d","summary":[{"type":"summary_text","text":%q}],"encrypted_content":"gAAAAB-standin-opaque"}`, len(req.Input), reasoningText),
			fmt.Sprintf(`{"type":"function_call","id":"fc_standin_%d","status":"completed","call_id":"call_standin_%d","name":"exec_command","arguments":%q}`, len(req.Input), len(req.Input), args))
	default:
		text := fmt.Sprintf("%s (%d items).", notedText, len(req.Input))
		ex.Answered = "text: " + text
		items = append(items, messageItem(text))
	}
	ex.Status = http.StatusOK
	writeStream(w, req.Model, len(s.Exchanges())+1, items)
}

func messageItem(text string) string {
	return fmt.Sprintf(`{"type":"message","id":"msg_standin","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}`, text)
}

// writeStream writes the response of items as the API streams it: each
// item added and done, then response.completed with the whole output.
func writeStream(w http.ResponseWriter, model string, n int, items []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	seq := 0
	send := func(typ, rest string) {
		seq++
		_, _ = fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, rest)
		_ = rc.Flush()
	}
	id := fmt.Sprintf("resp_standin_%d", n)
	send("response.created", fmt.Sprintf(`"response":{"id":%q,"object":"response","status":"in_progress","model":%q,"output":[]}`, id, model))
	for i, it := range items {
		send("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":%s`, i, it))
		send("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":%s`, i, it))
	}
	send("response.completed", fmt.Sprintf(`"response":{"id":%q,"object":"response","status":"completed","model":%q,"output":[%s],"usage":{"input_tokens":100,"output_tokens":10,"total_tokens":110}}`,
		id, model, strings.Join(items, ",")))
}
