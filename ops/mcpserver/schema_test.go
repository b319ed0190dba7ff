package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/model"
	"weft/ops/tools"
)

// schemaProp is one property of an input schema as a client reads it.
type schemaProp struct {
	Type  any      `json:"type"`
	Enum  []string `json:"enum"`
	Items *struct {
		Properties map[string]schemaProp `json:"properties"`
	} `json:"items"`
}

// types lists a property's JSON types, whether written as one or a list.
func (p schemaProp) types() []string {
	switch t := p.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// listedSchemas returns every tool's input schema as tools/list gives it.
func listedSchemas(t *testing.T, cs *mcp.ClientSession) map[string]struct {
	Properties map[string]schemaProp `json:"properties"`
	Required   []string              `json:"required"`
} {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		Properties map[string]schemaProp `json:"properties"`
		Required   []string              `json:"required"`
	}{}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		s := out[tool.Name]
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: input schema %s: %v", tool.Name, b, err)
		}
		out[tool.Name] = s
	}
	return out
}

// TestRequiredArgumentsAreNotNullable: a required argument is to be
// given, so its schema offers no null (an empty list says "none" where
// one may be empty).
func TestRequiredArgumentsAreNotNullable(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "schemas", nil)
	for name, s := range listedSchemas(t, cs) {
		for _, req := range s.Required {
			p, ok := s.Properties[req]
			if !ok {
				t.Errorf("%s: required %s is not a property", name, req)
				continue
			}
			if ts := p.types(); len(ts) == 0 || slices.Contains(ts, "null") {
				t.Errorf("%s: required argument %s has type %v: a required argument offers no null", name, req, p.Type)
			}
		}
	}
}

// refusedChoice reads a refusal of a fixed-value argument, as the
// handlers word it: `view "x" is not effective or raw`.
var refusedChoice = regexp.MustCompile(`\b([a-z_]+) "([^"]*)" is not ([a-z_]+(?:, [a-z_]+)* or [a-z_]+)\b`)

// choicesIn splits "a, b or c".
func choicesIn(list string) []string {
	head, last, _ := strings.Cut(list, " or ")
	if i := strings.LastIndex(list, " or "); i >= 0 {
		head, last = list[:i], list[i+4:]
	}
	return append(strings.Split(head, ", "), last)
}

// TestFixedValueArgumentsHaveEnums asks each handler, not a list kept
// beside it, which string arguments take a fixed set: every string
// argument is sent a value no handler takes, with otherwise good
// arguments; a handler that refuses it by listing what it takes must have
// exactly that list as the argument's enum, and every value of an enum
// must get past the handler's check.
func TestFixedValueArgumentsHaveEnums(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "schemas", nil)
	ctx := context.Background()
	schemas := listedSchemas(t, cs)

	st := newToolState(t, svc, sid)

	const bogus = "zz-no-such-value"
	call := func(name string, args map[string]any) (bool, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", name, err)
		}
		return res.IsError, text(res)
	}
	withArg := func(args map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for key, val := range args {
			out[key] = val
		}
		out[k] = v
		return out
	}
	found := map[string]bool{}
	for _, s := range sampleArgs {
		base := s.args(st)
		if _, ok := base["session_id"]; !ok && s.tool != "revert_operation" && s.tool != "toggle_operation" && s.tool != "create_session" && s.tool != "list_sessions" && s.tool != "search_sessions" {
			base["session_id"] = sid
		}
		schema := schemas[s.tool]
		for arg, p := range schema.Properties {
			if !slices.Contains(p.types(), "string") {
				continue
			}
			failed, msg := call(s.tool, withArg(base, arg, bogus))
			m := refusedChoice.FindStringSubmatch(msg)
			fixed := failed && m != nil && m[1] == arg && m[2] == bogus
			switch {
			case fixed:
				found[s.tool+"."+arg] = true
				want := choicesIn(m[3])
				if got := slices.Sorted(slices.Values(p.Enum)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
					t.Errorf("%s: %s takes %v (its handler says), the schema's enum is %v", s.tool, arg, want, p.Enum)
				}
			case len(p.Enum) > 0:
				t.Errorf("%s: %s has the enum %v, but the handler took %q (%.100s)", s.tool, arg, p.Enum, bogus, msg)
			}
			for _, v := range p.Enum {
				failed, msg := call(s.tool, withArg(base, arg, v))
				if m := refusedChoice.FindStringSubmatch(msg); failed && m != nil && m[1] == arg {
					t.Errorf("%s: %s=%q is in the enum but refused: %s", s.tool, arg, v, msg)
				}
			}
		}
	}
	// The probe must have found the fixed sets there are, or it proves
	// nothing.
	for _, want := range []string{"get_session_history.format", "get_session_history.view", "assemble_context.format",
		"search_session_history.mode", "search_session_history.view", "get_message_range.view", "summarize_message_range.source"} {
		if !found[want] {
			t.Errorf("%s was not found to take a fixed set", want)
		}
	}

	// A message's role is one of model.Roles, wherever messages are taken.
	roles := make([]string, len(model.Roles))
	for i, r := range model.Roles {
		roles[i] = string(r)
	}
	for _, name := range []string{"append_messages", "insert_messages", "revise_messages"} {
		arg := "messages"
		if name == "revise_messages" {
			arg = "replacements"
		}
		p := schemas[name].Properties[arg]
		if p.Items == nil || !slices.Equal(p.Items.Properties["role"].Enum, roles) {
			t.Errorf("%s: %s[].role has no enum %v: %+v", name, arg, roles, p.Items)
		}
	}
}
