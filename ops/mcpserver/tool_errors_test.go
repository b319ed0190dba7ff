package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
)

// badCall is a call a tool must refuse, and what the refusal must say.
type badCall struct {
	args string
	says []string
}

// badCalls has, for every tool of the registry, calls with a bad argument
// (an out-of-range index, a value the argument does not take, an unknown
// operation) on the demo thread. A tool added to the registry without an
// entry here fails TestEveryToolRefusesBadArguments.
var badCalls = map[string][]badCall{
	"list_sessions":            {{`{"limit":-1}`, []string{"limit -1 is negative"}}, {`{"since":"whenever"}`, []string{`since: cannot read "whenever" as a time`}}},
	"create_session":           {{`{"title":""}`, []string{"title is empty"}}, {`{"room":"r","interface":"a\nb"}`, []string{"interface", "control character"}}},
	"get_session_by_room":      {{`{"room":""}`, []string{"room is empty"}}, {`{"room":"nosuchroom"}`, []string{`room "nosuchroom" has no session`}}},
	"rename_session":           {{`{"title":"  "}`, []string{"title is empty"}}},
	"fork_session":             {{`{"at_idx":100000}`, []string{"outside the thread"}}, {`{"at":"m0"}`, []string{"not in session"}}},
	"delete_session":           {{`{"session_id":""}`, []string{"session_id is empty"}}},
	"append_messages":          {{`{"messages":[{"role":"robot","content":"x"}]}`, []string{`messages[0]`, `role "robot"`}}},
	"add_turn":                 {{`{"query":""}`, []string{"query is empty"}}},
	"search_sessions":          {{`{"query":""}`, []string{"query is empty"}}, {`{"query":"x","until":"soonish"}`, []string{`until: cannot read "soonish" as a time`}}},
	"get_session_history":      {{`{"format":"pdf"}`, []string{`format "pdf"`}}},
	"tag_messages":             {{`{"start_idx":0,"end_idx":999,"tags":["a"]}`, []string{"end_idx 999 is past the end"}}},
	"digest_messages":          {{`{"start_idx":0,"end_idx":999,"summary":"s"}`, []string{"end_idx 999 is past the end"}}},
	"revise_messages":          {{`{"start_idx":5,"end_idx":999,"replacements":[]}`, []string{"end_idx 999 is past the end"}}},
	"snip_messages":            {{`{"start_idx":999,"end_idx":999}`, []string{"start_idx 999 is past the end"}}},
	"resequence_messages":      {{`{"new_order":[0,999]}`, []string{"new_order", "999", "outside the thread"}}},
	"insert_messages":          {{`{"after_idx":999,"messages":[{"role":"user","content":"x"}]}`, []string{"after_idx 999 is outside the thread"}}},
	"list_operations":          {{`{"session_id":"nosuch"}`, []string{`session "nosuch" not found`}}},
	"diff_session":             {{`{"max_tokens":20}`, []string{"max_tokens 20 is too small"}}},
	"revert_operation":         {{`{"operation_id":"op-nosuch"}`, []string{`operation "op-nosuch" not found`}}},
	"toggle_operation":         {{`{"operation_id":"op-nosuch","active":false}`, []string{`operation "op-nosuch" not found`}}, {`{"operation_id":"op-nosuch"}`, []string{"active is missing"}}},
	"set_active_tags":          {{`{"session_id":"nosuch","tags":["a"]}`, []string{`session "nosuch" not found`}}},
	"get_conversation_context": {{`{"turns":-5}`, []string{"turns -5 is negative"}}},
	"get_turns_since":          {{`{"timestamp":"not a time"}`, []string{`cannot read "not a time" as a time`}}},
	"get_turns_around":         {{`{"timestamp":"garbage"}`, []string{`cannot read "garbage" as a time`}}},
	"search_session_history":   {{`{"query":"x","mode":"psychic"}`, []string{`mode "psychic"`}}},
	"get_message_range":        {{`{"start_idx":0,"end_idx":99999}`, []string{"end_idx 99999 is past the end"}}},
	// The message names end_idx, not end_message_index: see the report.
	"request_context_slice":     {{`{"start_message_index":0,"end_message_index":99999}`, []string{"end_message_index 99999 is past the end"}}},
	"summarize_message_range":   {{`{"start_idx":0,"end_idx":99999,"store":true}`, []string{"end_idx 99999 is past the end"}}},
	"assemble_context":          {{`{"format":"xml"}`, []string{`format "xml"`}}},
	"apply_context_operations":  {{`{"messages":[{"role":"robot","content":"x"}]}`, []string{`role "robot"`}}},
	"get_startup_context":       {{`{"summaries":-1}`, []string{"summaries -1 is negative"}}},
	"get_memory_policy":         {{`{"session_id":"nosuch"}`, []string{`session "nosuch" not found`}}},
	"set_memory_policy":         {{`{"max_active_turns":0}`, []string{"max_active_turns 0 must be 1 or more"}}, {`{"scope":"galaxy"}`, []string{`scope "galaxy"`}}},
	"summarize_conversation":    {{`{"session_id":"nosuch"}`, []string{`session "nosuch" not found`}}},
	"get_tiered_history":        {{`{"session_id":"nosuch"}`, []string{`session "nosuch" not found`}}},
	"format_history_for_prompt": {{`{"max_tokens":5}`, []string{"max_tokens 5 is outside 100..100000"}}},
}

// wrongValue is a JSON value of another type than a schema asks for, or
// "" when the schema takes any value.
func wrongValue(schema map[string]any) string {
	types := []string{}
	switch t := schema["type"].(type) {
	case string:
		types = append(types, t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
	}
	if len(types) != 1 {
		return ""
	}
	switch types[0] {
	case "string", "object":
		return `5`
	}
	return `"x"` // integer, number, boolean, array
}

// Every tool, over MCP, refuses bad arguments with a tool error that says
// what was wrong, and changes nothing. Beyond badCalls, every argument of
// every tool is given a value of the wrong type, and every tool that takes
// a session is given one that does not exist.
func TestEveryToolRefusesBadArguments(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ctx := context.Background()
	// A second session, the most recent: refusals must leave it alone too.
	if _, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "second"}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "bad-caller", nil)
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range listed.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		json.Unmarshal(b, &s)
		schemas[tool.Name], _ = s["properties"].(map[string]any)
	}

	// state is every session's version: a refused call changes none.
	state := func() string {
		list, err := reads.ListSessions(svc, ctx, reads.ListSessionsArgs{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, s := range list.Sessions {
			fmt.Fprintf(&b, "%s@%d ", s.SessionID, s.Version)
		}
		return b.String()
	}
	before := state()

	type tcase struct {
		name, tool, args string
		says             []string
	}
	var cases []tcase
	for _, tool := range tools.All() {
		bad, ok := badCalls[tool.Name]
		if !ok {
			t.Errorf("%s has no bad-argument case in badCalls", tool.Name)
		}
		for i, b := range bad {
			// On the demo thread, not the newer empty session.
			args := b.args
			if slices.Contains(tool.ArgNames(), "session_id") && !strings.Contains(args, `"session_id"`) {
				args = fmt.Sprintf(`{"session_id":%q,%s`, sid, args[1:])
			}
			cases = append(cases, tcase{fmt.Sprintf("%s/%d", tool.Name, i), tool.Name, args, b.says})
		}
		for _, arg := range tool.ArgNames() {
			p, _ := schemas[tool.Name][arg].(map[string]any)
			if v := wrongValue(p); v != "" {
				cases = append(cases, tcase{tool.Name + "/wrong type " + arg, tool.Name, fmt.Sprintf(`{%q:%s}`, arg, v), []string{"argument " + arg + " must be"}})
			}
		}
		cases = append(cases, tcase{tool.Name + "/unknown argument", tool.Name, `{"no_such_argument":1}`, []string{`no argument "no_such_argument"`}})
		if slices.Contains(tool.ArgNames(), "session_id") && tool.Name != "revert_operation" && tool.Name != "toggle_operation" {
			i := slices.IndexFunc(sampleArgs, func(s struct {
				tool string
				args func(st *toolState) map[string]any
			}) bool {
				return s.tool == tool.Name
			})
			if i < 0 {
				t.Errorf("%s takes a session but has no sample arguments to try an unknown one with", tool.Name)
				continue
			}
			args := sampleArgs[i].args(&toolState{timestamp: "2026-01-01T00:00:00Z"})
			args["session_id"] = "nosuch"
			b, _ := json.Marshal(args)
			cases = append(cases, tcase{tool.Name + "/unknown session", tool.Name, string(b), []string{`session "nosuch" not found`}})
		}
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: protocol error %v, want a tool error", tc.args, err)
			}
			if !res.IsError {
				t.Fatalf("%s succeeded: %.200s", tc.args, text(res))
			}
			for _, want := range tc.says {
				if !strings.Contains(text(res), want) {
					t.Errorf("%s: %q does not say %q", tc.args, text(res), want)
				}
			}
		})
	}
	if after := state(); after != before {
		t.Errorf("refused calls changed sessions:\nbefore %s\nafter  %s", before, after)
	}
}
