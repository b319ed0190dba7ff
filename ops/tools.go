package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
)

// Tool is one entry of the registry: every face (weft call, MCP, HTTP)
// exposes exactly these, with these names, descriptions and types.
type Tool struct {
	Name        string
	Description string
	// Hints, as MCP's tool annotations carry them.
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	// OpenWorld: the tool may reach outside weft (a summary endpoint, the
	// client's model).
	OpenWorld bool

	ArgsType   reflect.Type
	ResultType reflect.Type

	call func(ctx context.Context, s *Service, args any) (any, error)
}

type hints struct{ readOnly, destructive, idempotent, openWorld bool }

var (
	readOnly = hints{readOnly: true, idempotent: true}
	// Operations are reversible, so edits are not destructive.
	edit = hints{}
	// Setting something to a value is idempotent.
	setter = hints{idempotent: true}
	// A revert is final for an agent: no tool undoes it (toggle_operation
	// refuses reverted operations).
	final = hints{destructive: true}
	// An edit that may ask a model outside weft (WEFT_SUMMARY_URL, the
	// client's model through sampling).
	openEdit = hints{openWorld: true}
)

func def[A, R any](name, desc string, h hints, fn func(*Service, context.Context, A) (R, error)) *Tool {
	return &Tool{
		Name: name, Description: desc,
		ReadOnly: h.readOnly, Destructive: h.destructive, Idempotent: h.idempotent, OpenWorld: h.openWorld,
		ArgsType: reflect.TypeFor[A](), ResultType: reflect.TypeFor[R](),
		call: func(ctx context.Context, s *Service, args any) (res any, err error) {
			// A bug in a handler answers this request with an internal
			// error; the process, and every other request, go on.
			defer func() {
				if r := recover(); r != nil {
					pe := &PanicError{Tool: name, Value: r, Stack: debug.Stack()}
					s.logger.Error("tool panicked", "tool", name, "panic", fmt.Sprint(r), "stack", string(pe.Stack))
					res, err = nil, pe
				}
			}()
			return fn(s, ctx, *args.(*A))
		},
	}
}

// registry lists every tool, in the order help shows them.
var registry = []*Tool{
	// Sessions (seed 004).
	def("list_sessions", "List sessions, most recently updated first, with message counts, tokens and versions.", readOnly, (*Service).ListSessions),
	def("create_session", "Create an empty session and return its ID.", edit, (*Service).CreateSession),
	def("rename_session", "Give a session a new title. Its thread is untouched.", setter, (*Service).RenameSession),
	def("delete_session", "Delete a session and everything in it from the file: messages, operations, import keys. It cannot be undone; it takes the session's full ID only.", final, (*Service).DeleteSession),
	def("append_messages", "Store messages at the end of a session's thread. Stored messages never change; edits are operations over them.", edit, (*Service).AppendMessages),
	def("add_turn", "Append a turn: the user's query and, if given, the assistant's response.", edit, (*Service).AddTurn),
	def("search_sessions", "Search every session's title and effective thread for text (query, case-insensitive; limit sessions), saying what matched, with snippets.", readOnly, (*Service).SearchSessions),
	def("get_session_history", "A session's thread as text, markdown or json (format), effective or stored (view), the latest limit items.", readOnly, (*Service).GetSessionHistory),

	// Editing (seed 002). Every edit is a reversible operation.
	def("tag_messages", "Attach tags to a range (start_idx..end_idx, inclusive, in the effective thread) or to items by ID.", edit, (*Service).TagMessages),
	def("digest_messages", "Collapse a range into one summary (a system message). Reversible: the originals stay stored.", edit, (*Service).DigestMessages),
	def("revise_messages", "Replace a range with other messages (possibly none). Reversible.", edit, (*Service).ReviseMessages),
	def("snip_messages", "Remove a range from the effective thread. Reversible.", edit, (*Service).SnipMessages),
	def("resequence_messages", "Reorder items: new_order lists indices in their new order; their positions, sorted, are refilled in that order.", edit, (*Service).ResequenceMessages),
	def("insert_messages", "Insert synthetic messages after an index (-1: at the start) or after an item ID.", edit, (*Service).InsertMessages),
	def("list_operations", "List a session's operations with type, status (active, inactive, reverted, partial, orphaned), targets, author and time.", readOnly, (*Service).ListOperations),
	def("revert_operation", "Revert an operation: the thread is as if it had never been made. It stays in the record.", final, (*Service).RevertOperation),
	def("toggle_operation", "Switch an operation on or off.", setter, (*Service).ToggleOperation),
	def("set_active_tags", "Set the session's active tags; operations with when_tags apply only while all of theirs are active.", setter, (*Service).SetActiveTags),

	// Navigation (seed 000).
	def("get_conversation_context", "Give about N turns of context: the recent unsummarized turns, then as many of the latest summaries as it takes to cover the rest.", readOnly, (*Service).GetConversationContext),
	def("get_turns_since", "Turns created at or after a time (oldest first, default limit 1000), and the summaries whose span reaches it.", readOnly, (*Service).GetTurnsSince),
	def("get_turns_around", "A window of the effective thread centred on a time: count items, before_ratio of them before it.", readOnly, (*Service).GetTurnsAround),

	// Context control (seed 001).
	def("search_session_history", "Search the thread: substring (case-insensitive, thread order) or fuzzy (best first).", readOnly, (*Service).SearchSessionHistory),
	def("get_message_range", "Messages start_idx..end_idx (inclusive) of the effective thread, or of the stored messages with view=raw.", readOnly, (*Service).GetMessageRange),
	def("request_context_slice", "Ask for a slice of the thread (and optionally search matches) in the next assembled context. Used once.", setter, (*Service).RequestContextSlice),
	def("summarize_message_range", "Summarize start_idx..end_idx (or ids) in at most max_tokens, with the client's model (sampling), the WEFT_SUMMARY_URL endpoint or locally (extractive), saying which; read-only unless store=true records it as a digest.", openEdit, (*Service).SummarizeMessageRange),
	def("assemble_context", "The effective thread ready to send as openai messages, an anthropic body or text (format), using pending context preferences once; max_tokens fits a budget (recent turns raw, then summaries, the oldest left out first), max_messages keeps the latest.", edit, (*Service).AssembleContext),
	def("apply_context_operations", "The pre-request hook: send the whole thread (messages, chat-completions shape); messages already stored are recognised by digest, new ones appended, and the thread comes back with the active operations applied.", setter, (*Service).ApplyContextOperations),

	// Startup (seed 003).
	def("get_startup_context", "The startup package by recency, not search: the latest summaries and ALL unsummarized turns.", readOnly, (*Service).GetStartupContext),
}

// Tools returns every tool, in a stable order.
func Tools() []*Tool { return slices.Clone(registry) }

// LookupTool finds a tool by name.
func LookupTool(name string) (*Tool, bool) {
	i := slices.IndexFunc(registry, func(t *Tool) bool { return t.Name == name })
	if i < 0 {
		return nil, false
	}
	return registry[i], true
}

// ToolNames lists the tools' names.
func ToolNames() []string {
	names := make([]string, len(registry))
	for i, t := range registry {
		names[i] = t.Name
	}
	return names
}

// Invoke runs the tool on arguments of its own type (ArgsType, or a
// pointer to one), for callers in this process that hold typed values;
// the result is of ResultType.
func (t *Tool) Invoke(ctx context.Context, s *Service, args any) (any, error) {
	v := reflect.ValueOf(args)
	switch {
	case v.Type() == t.ArgsType:
		p := reflect.New(t.ArgsType)
		p.Elem().Set(v)
		return t.call(ctx, s, p.Interface())
	case v.Kind() == reflect.Pointer && v.Type().Elem() == t.ArgsType && !v.IsNil():
		return t.call(ctx, s, args)
	}
	return nil, fmt.Errorf("%s takes %s, not %T", t.Name, t.ArgsType, args)
}

// Call decodes JSON arguments strictly and runs the tool.
func (t *Tool) Call(ctx context.Context, s *Service, raw json.RawMessage) (any, error) {
	args, err := t.Decode(raw)
	if err != nil {
		return nil, err
	}
	return t.call(ctx, s, args)
}

// Decode reads JSON arguments into a new value of the tool's argument
// type. Unknown arguments, wrong types and trailing data are errors that
// name the argument and what it takes.
func (t *Tool) Decode(raw json.RawMessage) (any, error) {
	args := reflect.New(t.ArgsType).Interface()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return nil, Invalidf("%s takes a JSON object of arguments (%s)", t.Name, strings.Join(t.ArgNames(), ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(args); err != nil {
		return nil, t.decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Invalidf("%s: unexpected data after the arguments object", t.Name)
	}
	return args, nil
}

func (t *Tool) decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		if field == "" {
			return Invalidf("%s: arguments must be a JSON object", t.Name)
		}
		return Invalidf("%s: argument %s must be %s, not a JSON %s", t.Name, field, describeType(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return Invalidf("%s: arguments are not valid JSON (at byte %d: %v)", t.Name, syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Invalidf("%s has no argument %q; it takes: %s", t.Name, name, strings.Join(t.ArgNames(), ", "))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return Invalidf("%s: the arguments JSON ends too soon", t.Name)
	}
	return Invalidf("%s: %v", t.Name, err)
}

func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	}
	return "an object"
}

// arg is one argument of a tool, flattened through embedded structs.
type arg struct {
	name string
	typ  reflect.Type
}

func argsOf(t reflect.Type) []arg {
	var out []arg
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, argsOf(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, arg{name, f.Type})
	}
	return out
}

// ArgNames lists the tool's argument names.
func (t *Tool) ArgNames() []string {
	var names []string
	for _, a := range argsOf(t.ArgsType) {
		names = append(names, a.name)
	}
	return names
}

// ArgsFromPairs turns key=value words (as typed on a command line) into
// the tool's JSON arguments, reading each value by its argument's type:
// strings as they are, numbers and booleans parsed, lists as JSON or
// comma-separated, objects as JSON.
func (t *Tool) ArgsFromPairs(pairs []string) (json.RawMessage, error) {
	args := argsOf(t.ArgsType)
	obj := make(map[string]json.RawMessage, len(pairs))
	for _, p := range pairs {
		key, val, ok := strings.Cut(p, "=")
		if !ok || key == "" {
			return nil, Invalidf("%q is not key=value; %s takes: %s", p, t.Name, strings.Join(t.ArgNames(), ", "))
		}
		i := slices.IndexFunc(args, func(a arg) bool { return a.name == key })
		if i < 0 {
			return nil, Invalidf("%s has no argument %q; it takes: %s", t.Name, key, strings.Join(t.ArgNames(), ", "))
		}
		if _, dup := obj[key]; dup {
			return nil, Invalidf("argument %s is given twice", key)
		}
		raw, err := pairValue(args[i].typ, val)
		if err != nil {
			return nil, Invalidf("argument %s: %v", key, err)
		}
		obj[key] = raw
	}
	return json.Marshal(obj)
}

func pairValue(t reflect.Type, val string) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return json.Marshal(val)
	case reflect.Slice:
		if strings.HasPrefix(strings.TrimSpace(val), "[") {
			break
		}
		if val == "" {
			return json.RawMessage("[]"), nil
		}
		var items []json.RawMessage
		for _, part := range strings.Split(val, ",") {
			item, err := pairValue(t.Elem(), strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return json.Marshal(items)
	}
	// Numbers, booleans, objects and JSON lists are written as JSON.
	if !json.Valid([]byte(val)) {
		return nil, fmt.Errorf("want %s, got %q", describeType(t), val)
	}
	return json.RawMessage(val), nil
}
