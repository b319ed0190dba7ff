package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The stand-in's answers in the Responses API's shape (POST
// /v1/responses): a response object with its output items, or the
// stream of response.* events that builds it, as OpenAI sends them.

// rsAnswer answers with a reasoning item (when reasoning is not ""),
// a message (when text is not "") and function calls, in the mode the
// request asks for.
func rsAnswer(reasoning, text string, calls []toolCall) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return rsAnswerCut(reasoning, text, calls, "", -1)
}

// rsAnswerCut answers as rsAnswer does; a stream ends with the event
// named last instead of response.completed (when last is not ""), or
// stops after cut events and waits for the request to end (cut >= 0; a
// cut past the last event sends them all, then waits).
func rsAnswerCut(reasoning, text string, calls []toolCall, last string, cut int) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		items := rsItems(reasoning, text, calls)
		if !streams(body) {
			out, _ := json.Marshal(items)
			writeJSON(w, fmt.Sprintf(`{"id":"resp_1","object":"response","created_at":1700000000,"status":"completed","model":"stand-in","output":%s,"usage":{"input_tokens":10,"output_tokens":3,"total_tokens":13}}`, out))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Request-Id", "req_standin")
		events := rsEvents(items, last)
		rc := http.NewResponseController(w)
		for k, e := range events {
			if k == cut {
				<-r.Context().Done()
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
			rc.Flush()
		}
		if cut >= len(events) {
			<-r.Context().Done() // the whole answer sent, the connection held open
		}
	}
}

// rsItems are the output items of an answer, as JSON objects.
func rsItems(reasoning, text string, calls []toolCall) []json.RawMessage {
	var items []json.RawMessage
	add := func(format string, args ...any) {
		items = append(items, json.RawMessage(fmt.Sprintf(format, args...)))
	}
	if reasoning != "" {
		add(`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":%q}],"encrypted_content":"gAAAAB-opaque-%d"}`, reasoning, len(reasoning))
	}
	if text != "" {
		add(`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}`, text)
	}
	for _, c := range calls {
		add(`{"type":"function_call","id":"fc_%s","status":"completed","call_id":%q,"name":%q,"arguments":%q}`, c.id, c.id, c.name, c.input)
	}
	return items
}

// rsEvent is one server-sent event of a Responses stream.
type rsEvent struct {
	name, data string
}

// rsEvents is the stream that builds items: each item added, its text or
// arguments in two deltas, done; then response.completed (or last) with
// the whole output.
func rsEvents(items []json.RawMessage, last string) []rsEvent {
	seq := 0
	var events []rsEvent
	add := func(name, format string, args ...any) {
		seq++
		events = append(events, rsEvent{name, fmt.Sprintf(`{"type":%q,"sequence_number":%d,`, name, seq) + fmt.Sprintf(format, args...) + "}"})
	}
	add("response.created", `"response":{"id":"resp_1","object":"response","status":"in_progress","model":"stand-in","output":[]}`)
	add("response.in_progress", `"response":{"id":"resp_1","object":"response","status":"in_progress","model":"stand-in","output":[]}`)
	for i, raw := range items {
		var it struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Arguments string `json:"arguments"`
			Content   []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(raw, &it)
		add("response.output_item.added", `"output_index":%d,"item":%s`, i, raw)
		switch it.Type {
		case "message":
			text := it.Content[0].Text
			half := len(text) / 2
			add("response.content_part.added", `"item_id":%q,"output_index":%d,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`, it.ID, i)
			for _, piece := range []string{text[:half], text[half:]} {
				add("response.output_text.delta", `"item_id":%q,"output_index":%d,"content_index":0,"delta":%q`, it.ID, i, piece)
			}
			add("response.output_text.done", `"item_id":%q,"output_index":%d,"content_index":0,"text":%q`, it.ID, i, text)
		case "function_call":
			half := len(it.Arguments) / 2
			for _, piece := range []string{it.Arguments[:half], it.Arguments[half:]} {
				add("response.function_call_arguments.delta", `"item_id":%q,"output_index":%d,"delta":%q`, it.ID, i, piece)
			}
			add("response.function_call_arguments.done", `"item_id":%q,"output_index":%d,"arguments":%q`, it.ID, i, it.Arguments)
		}
		add("response.output_item.done", `"output_index":%d,"item":%s`, i, raw)
	}
	out, _ := json.Marshal(items)
	switch last {
	case "":
		add("response.completed", `"response":{"id":"resp_1","object":"response","status":"completed","model":"stand-in","output":%s,"usage":{"input_tokens":10,"output_tokens":3,"total_tokens":13}}`, out)
	case "error":
		add("error", `"code":"server_error","message":"The model broke off."`)
	default:
		add(last, `"response":{"id":"resp_1","object":"response","status":%q,"model":"stand-in","output":%s}`, strings.TrimPrefix(last, "response."), out)
	}
	return events
}
