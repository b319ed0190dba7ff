package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/ops/tools/toolstest"
	"weft/store/boltstore"
)

func TestRegistryIsComplete(t *testing.T) {
	t.Parallel()
	want := []string{
		"list_sessions", "create_session", "get_session_by_room", "rename_session", "fork_session", "delete_session", "append_messages", "add_turn", "search_sessions", "get_session_history",
		"tag_messages", "digest_messages", "revise_messages", "snip_messages", "resequence_messages", "insert_messages",
		"list_operations", "diff_session", "revert_operation", "toggle_operation", "set_active_tags",
		"get_conversation_context", "get_turns_since", "get_turns_around",
		"search_session_history", "get_message_range", "request_context_slice", "summarize_message_range", "assemble_context",
		"apply_context_operations",
		"get_memory_policy", "set_memory_policy", "summarize_conversation", "get_tiered_history", "format_history_for_prompt",
		"get_startup_context",
	}
	for _, name := range want {
		tool, ok := tools.Lookup(name)
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		if tool.Description == "" || tool.ArgsType.Kind() != reflect.Struct {
			t.Errorf("%s: incomplete declaration", name)
		}
		if tool.ReadOnly && !strings.HasPrefix(name, "get_") && !strings.HasPrefix(name, "list_") && !strings.HasPrefix(name, "search_") && !strings.HasPrefix(name, "format_") && !strings.HasPrefix(name, "diff_") {
			t.Errorf("%s is marked read-only", name)
		}
		for _, arg := range tool.ArgNames() {
			if arg != strings.ToLower(arg) || strings.Contains(arg, "-") {
				t.Errorf("%s: argument %q is not snake_case", name, arg)
			}
		}
	}
	if len(tools.All()) != len(want) {
		t.Errorf("%d tools registered, want %d", len(tools.All()), len(want))
	}
}

func TestArgsFromPairs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool  string
		pairs []string
		want  string
		err   string
	}{
		{"digest_messages", []string{"start_idx=3", "end_idx=8", "summary=Chose JWT, finally"}, `{"end_idx":8,"start_idx":3,"summary":"Chose JWT, finally"}`, ""},
		{"tag_messages", []string{"ids=m1,m2", "tags=db,auth"}, `{"ids":["m1","m2"],"tags":["db","auth"]}`, ""},
		{"tag_messages", []string{`tags=["a,b"]`}, `{"tags":["a,b"]}`, ""},
		{"resequence_messages", []string{"new_order=8,9,5"}, `{"new_order":[8,9,5]}`, ""},
		{"resequence_messages", []string{"new_order=[8,9]"}, `{"new_order":[8,9]}`, ""},
		{"get_turns_since", []string{"timestamp=2026-01-26T07:30:00", "include_summaries=false"}, `{"include_summaries":false,"timestamp":"2026-01-26T07:30:00"}`, ""},
		{"get_turns_around", []string{"timestamp=-2h", "before_ratio=0.7"}, `{"before_ratio":0.7,"timestamp":"-2h"}`, ""},
		{"digest_messages", []string{"summary=true"}, `{"summary":"true"}`, ""},
		{"digest_messages", []string{"start_idx=three"}, "", `argument start_idx: want an integer, got "three"`},
		{"digest_messages", []string{"begin=1"}, "", `has no argument "begin"`},
		{"digest_messages", []string{"start_idx"}, "", "is not key=value"},
		{"digest_messages", []string{"start_idx=1", "start_idx=2"}, "", "given twice"},
	}
	for _, tt := range tests {
		tool, _ := tools.Lookup(tt.tool)
		raw, err := tool.ArgsFromPairs(tt.pairs)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %q", tt.pairs, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tt.pairs, err)
			continue
		}
		var got, want any
		_ = json.Unmarshal(raw, &got)
		_ = json.Unmarshal([]byte(tt.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: %s, want %s", tt.pairs, raw, tt.want)
		}
	}
}

// FuzzToolArgs feeds arbitrary bytes to every tool's argument decoder:
// it must never panic, refuse with ErrInvalid, and anything it accepts
// must survive a round trip.
func FuzzToolArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"start_idx":3,"end_idx":8,"summary":"x"}`, `{"new_order":[8,9,5]}`, `{"messages":[{"role":"user","content":"hi","parts":[{"type":"text"}]}]}`,
		`{"tags":["a"],"when_tags":["b"],"expected_version":3}`, `{"timestamp":"-2h","count":40,"before_ratio":0.5}`, `null`, `[]`, `{"active":true}`, `{"ids":["m1","op/0"]}`} {
		for i := range tools.All() {
			f.Add(i, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which int, raw []byte) {
		all := tools.All()
		tool := all[(which%len(all)+len(all))%len(all)]
		args, err := tool.Decode(raw)
		if err != nil {
			if !errors.Is(err, ops.ErrInvalid) {
				t.Fatalf("%s: error %v is not ErrInvalid", tool.Name, err)
			}
			return
		}
		again, err := json.Marshal(args)
		if err != nil {
			t.Fatalf("%s: accepted arguments do not marshal: %v", tool.Name, err)
		}
		if _, err := tool.Decode(again); err != nil {
			t.Fatalf("%s: %s was accepted, its re-encoding %s is refused: %v", tool.Name, raw, again, err)
		}
	})
}

// TestInvokeTakesTypedArguments: a caller in this process hands a tool
// its own argument type (or a pointer to one) and gets its result type;
// anything else is refused, saying what the tool takes.
func TestInvokeTakesTypedArguments(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("typed", 3)
	tool, _ := tools.Lookup("list_sessions")
	for _, args := range []any{reads.ListSessionsArgs{}, &reads.ListSessionsArgs{}} {
		res, err := tool.Invoke(context.Background(), f.Svc, args)
		if err != nil {
			t.Fatal(err)
		}
		if list, ok := res.(reads.ListSessionsResult); !ok || list.Total != 1 {
			t.Fatalf("Invoke(%T) = %#v", args, res)
		}
	}
	if _, err := tool.Invoke(context.Background(), f.Svc, map[string]any{}); err == nil || !strings.Contains(err.Error(), "list_sessions takes reads.ListSessionsArgs") {
		t.Errorf("a map for arguments: %v", err)
	}
}

// FuzzRunTools runs every tool on fuzzed arguments against a small real
// session (stored messages, a digest, a revision, an insertion): a tool
// may refuse, but never panic (a panic comes back as a PanicError), and a
// refusal changes nothing.
func FuzzRunTools(f *testing.F) {
	seeds := []string{`{}`, `{"start_idx":3,"end_idx":8,"summary":"x"}`, `{"new_order":[8,9,5]}`,
		`{"messages":[{"role":"user","content":"hi","parts":[{"type":"text"}]}]}`,
		`{"tags":["a"],"when_tags":["b"],"expected_version":3}`, `{"timestamp":"-2h","count":40,"before_ratio":0.5}`,
		`{"timestamp":"2026-01-26T09:05:00Z","count":9223372036854775807,"before_ratio":1}`,
		`{"turns":9223372036854775807}`, `{"limit":-1}`, `{"ids":["m1","op/0","m9999999999999999999"]}`,
		`{"start_idx":-9223372036854775808,"end_idx":9223372036854775807}`, `{"max_tokens":1,"format":"anthropic"}`,
		`{"query":"message","mode":"fuzzy","limit":1000}`, `{"operation_id":"nope"}`, `{"after_idx":-1,"messages":[{"role":"tool","content":"x"}]}`}
	for _, s := range seeds {
		for i := range tools.All() {
			f.Add(i, []byte(s))
		}
	}
	dir := f.TempDir() // not the iteration's: the fixture outlives it
	var fx *toolstest.Fixture
	runs := 0
	f.Fuzz(func(t *testing.T, which int, raw []byte) {
		if fx == nil || runs%200 == 0 { // a fresh, small session now and then
			if fx != nil {
				fx.St.Close()
			}
			st, err := boltstore.Open(filepath.Join(dir, fmt.Sprintf("fuzz-%d.db", runs)), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fx = &toolstest.Fixture{Fixture: &opstest.Fixture{T: t, Path: st.Path(), St: st, Now: opstest.T0.Add(48 * time.Hour)}}
			fx.Svc = ops.New(st, ops.WithClock(func() time.Time { return fx.Now }))
			fx.Session("fuzz", 12)
			fx.MustCall("digest_messages", `{"start_idx":2,"end_idx":4,"summary":"three"}`)
			fx.MustCall("revise_messages", `{"start_idx":5,"end_idx":5,"replacements":[{"role":"user","content":"revised"}]}`)
			fx.MustCall("insert_messages", `{"after_idx":6,"messages":[{"role":"assistant","content":"inserted"}]}`)
		}
		runs++
		fx.T = t
		all := tools.All()
		tool := all[(which%len(all)+len(all))%len(all)]
		before := fx.FileHash()
		_, err := tool.Call(context.Background(), fx.Svc, raw)
		var pe *ops.PanicError
		if errors.As(err, &pe) {
			t.Fatalf("%s %s panicked: %v\n%s", tool.Name, raw, pe.Value, pe.Stack)
		}
		if err != nil && errors.Is(err, ops.ErrInvalid) && fx.FileHash() != before {
			t.Fatalf("%s %s was refused (%v) but changed the file", tool.Name, raw, err)
		}
	})
}

// TestToolsAreBoundToTheirMethods: each tool runs the Service method its
// name says (snip_messages: SnipMessages), with that method's argument
// and result types. The tests inside ops reach the service by the same
// rule, since they cannot import the registry.
func TestToolsAreBoundToTheirMethods(t *testing.T) {
	t.Parallel()
	svc := reflect.TypeFor[*ops.Service]()
	for _, tool := range tools.All() {
		var name strings.Builder
		for _, w := range strings.Split(tool.Name, "_") {
			name.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
		m, ok := svc.MethodByName(name.String())
		if !ok {
			// The reads an agent calls live above ops, in ops/reads,
			// memory's tools in ops/memory, and a tool that is a room's
			// one idea in that room, named for the rest of the tool's
			// name (fork_session: ops/fork's Session); they have the
			// shape of a method expression.
			got := runtime.FuncForPC(reflect.ValueOf(tools.BoundTo(tool)).Pointer()).Name()
			verb, rest, _ := strings.Cut(tool.Name, "_")
			room := "weft/ops/" + verb + "." + strings.ToUpper(rest[:1]) + rest[1:]
			if got != "weft/ops/reads."+name.String() && got != "weft/ops/memory."+name.String() && got != room {
				t.Errorf("%s: ops.Service has no method %s, and the tool is bound to %s, not ops/reads' or ops/memory's %s, nor %s", tool.Name, name.String(), got, name.String(), room)
			}
			continue
		}
		if m.Type.NumIn() != 3 || m.Type.In(2) != tool.ArgsType || m.Type.NumOut() != 2 || m.Type.Out(0) != tool.ResultType {
			t.Errorf("%s: %s is %s, the tool takes %s and gives %s", tool.Name, name.String(), m.Type, tool.ArgsType, tool.ResultType)
		}
	}
}

// A tool that panics answers an internal error naming the tool, with its
// stack in the service's log; the service goes on (ops tests that its
// lock is let go).
func TestAPanickingToolIsAnError(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	var log bytes.Buffer
	f.Svc = ops.New(f.St, ops.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	f.Session("survives", 3)
	boom := tools.ReadOnlyTool("boom", "panics", func(s *ops.Service, ctx context.Context, a reads.ListSessionsArgs) (reads.ListSessionsResult, error) {
		panic("boom in the handler")
	})
	_, err := boom.Call(context.Background(), f.Svc, []byte(`{}`))
	var pe *ops.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "internal error in boom") || !strings.Contains(string(pe.Stack), "tools_test.go") {
		t.Fatalf("error %v (%T), want a PanicError naming the tool with its stack", err, err)
	}
	if strings.Contains(err.Error(), "boom in the handler") {
		t.Errorf("the error shows the panic's own text: %v", err)
	}
	if !strings.Contains(log.String(), "tool panicked") || !strings.Contains(log.String(), "tools_test.go") {
		t.Errorf("the panic is not in the service's log, with its stack:\n%s", log.String())
	}
	f.MustCall("append_messages", `{"messages":[{"role":"user","content":"still here"}]}`)
}
