// Package tools is weft's tool registry: every face (weft call, MCP,
// HTTP) exposes exactly these tools, with these names, descriptions,
// argument and result types and hints, each bound to the ops.Service
// method that does its work. It also holds the one way a face or a
// command reaches those tools, here or on the weft that holds the file
// (Backend, with Local over a Service; ops/relay has the remote one).
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"

	"weft/internal/jsonargs"
	"weft/ops"
	"weft/ops/fork"
	"weft/ops/memory"
	"weft/ops/reads"
)

// Tool is one entry of the registry.
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

	call func(ctx context.Context, s *ops.Service, args any) (any, error)
	fn   any // what the tool is bound to: a Service method or a read of ops/reads
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

func def[A, R any](name, desc string, h hints, fn func(*ops.Service, context.Context, A) (R, error)) *Tool {
	return &Tool{
		Name: name, Description: desc,
		ReadOnly: h.readOnly, Destructive: h.destructive, Idempotent: h.idempotent, OpenWorld: h.openWorld,
		ArgsType: reflect.TypeFor[A](), ResultType: reflect.TypeFor[R](), fn: fn,
		call: func(ctx context.Context, s *ops.Service, args any) (res any, err error) {
			// A bug in a handler answers this request with an internal
			// error; the process, and every other request, go on.
			defer func() {
				if r := recover(); r != nil {
					pe := &ops.PanicError{Tool: name, Value: r, Stack: debug.Stack()}
					s.Logger().Error("tool panicked", "tool", name, "panic", fmt.Sprint(r), "stack", string(pe.Stack))
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
	def("list_sessions", "List sessions, most recently updated first, with message counts, tokens, versions, and the room and interface of those that have them. interface keeps one interface's sessions; since and until keep those last updated in that range (the time of a session's latest write, not of its messages).", readOnly, reads.ListSessions),
	def("create_session", "Create an empty session and return its ID. With room and interface both given, the session is that room's one conversation on the interface: if the pair has a session already, it is returned with existing: true and nothing is made (call it freely to get a room's session). A room without an interface, or an interface without a room, is a label only: every call makes a new session.", edit, (*ops.Service).CreateSession),
	def("get_session_by_room", "Find a room's session: with interface, the room's one session on that interface (session_id); without, every session of the room, each with its interface. A room with no session (on the interface) is a not-found error that says how create_session makes one.", readOnly, reads.GetSessionByRoom),
	def("rename_session", "Give a session a new title. Its thread is untouched.", setter, (*ops.Service).RenameSession),
	def("fork_session", "Fork a session: a new session whose thread is this one's effective thread up to an item (at_idx or at; default the whole), its operations carried as far as they apply, the source unchanged. Try another path without losing this one.", edit, fork.Session),
	def("delete_session", "Delete a session and everything in it from the file: messages, operations, import keys. It cannot be undone; it takes the session's full ID only.", final, (*ops.Service).DeleteSession),
	def("append_messages", "Store messages at the end of a session's thread. Stored messages never change; edits are operations over them.", edit, (*ops.Service).AppendMessages),
	def("add_turn", "Append a turn: the user's query and, if given, the assistant's response.", edit, (*ops.Service).AddTurn),
	def("search_sessions", "Search every session's title and effective thread for text (query, case-insensitive; limit sessions), saying what matched, with snippets. interface, since and until search only the sessions of that interface, last updated in that range (the time of a session's latest write).", readOnly, reads.SearchSessions),
	def("get_session_history", "A session's thread as text, markdown or json (format), effective or stored (view), the latest limit items.", readOnly, reads.GetSessionHistory),

	// Editing (seed 002). Every edit is a reversible operation.
	def("tag_messages", "Attach tags to a range (start_idx..end_idx, inclusive, in the effective thread) or to items by ID.", edit, (*ops.Service).TagMessages),
	def("digest_messages", "Collapse a range into one summary (a system message). Reversible: the originals stay stored.", edit, (*ops.Service).DigestMessages),
	def("revise_messages", "Replace a range with other messages (possibly none). Reversible.", edit, (*ops.Service).ReviseMessages),
	def("snip_messages", "Remove a range from the effective thread. Reversible.", edit, (*ops.Service).SnipMessages),
	def("resequence_messages", "Reorder items: new_order lists indices in their new order; their positions, sorted, are refilled in that order.", edit, (*ops.Service).ResequenceMessages),
	def("insert_messages", "Insert synthetic messages after an index (-1: at the start) or after an item ID.", edit, (*ops.Service).InsertMessages),
	def("list_operations", "List a session's operations with type, status (active, inactive, reverted, partial, orphaned), targets, author and time.", readOnly, reads.ListOperations),
	def("diff_session", "What the model gets now against what was said: the stored thread set against the effective one, message by message. Per operation a hunk (op id, type, author, rule) of the stored messages it removed or replaced, the items it moved and the synthetic items it added, with stored and effective tokens per hunk and in total; the operations that change nothing; and the same as a unified diff (text: - what was said, + what the model gets).", readOnly, reads.DiffSession),
	def("revert_operation", "Revert an operation for good: it stops applying, and stays in the record. Later operations made over what it made stay: a revise of its summary then stands over the items the summary had replaced (still_standing names them; revert or switch them off too to see the originals).", final, (*ops.Service).RevertOperation),
	def("toggle_operation", "Switch an operation on or off. While it is off, later operations made over what it made (a revise of its summary) stand over the items it had replaced (still_standing names them).", setter, (*ops.Service).ToggleOperation),
	def("set_active_tags", "Set the session's active tags; operations with when_tags apply only while all of theirs are active.", setter, (*ops.Service).SetActiveTags),

	// Navigation (seed 000).
	def("get_conversation_context", "Give about N turns of context: the recent unsummarized turns, then as many of the latest summaries as it takes to cover the rest.", readOnly, reads.GetConversationContext),
	def("get_turns_since", "Turns created at or after a time (oldest first, default limit 1000), and the summaries whose span reaches it.", readOnly, reads.GetTurnsSince),
	def("get_turns_around", "A window of the effective thread centred on a time: count items, before_ratio of them before it.", readOnly, reads.GetTurnsAround),

	// Context control (seed 001).
	def("search_session_history", "Search the thread: substring (case-insensitive, thread order) or fuzzy (best first).", readOnly, reads.SearchSessionHistory),
	def("get_message_range", "Messages start_idx..end_idx (inclusive) of the effective thread, or of the stored messages with view=raw.", readOnly, reads.GetMessageRange),
	def("request_context_slice", "Ask for a slice of the thread (and optionally search matches) in the next assembled context. Used once.", setter, reads.RequestContextSlice),
	def("summarize_message_range", "Summarize start_idx..end_idx (or ids) in at most max_tokens, with the client's model (sampling), the WEFT_SUMMARY_URL endpoint or locally (extractive), saying which; read-only unless store=true records it as a digest.", openEdit, (*ops.Service).SummarizeMessageRange),
	def("assemble_context", "The effective thread ready to send as openai messages, an anthropic body or text (format), using pending context preferences once; max_tokens fits a budget (recent turns raw, then summaries, the oldest left out first), max_messages keeps the latest.", edit, reads.AssembleContext),
	def("apply_context_operations", "The pre-request hook: send the whole thread (messages, chat-completions shape); messages already stored are recognised by digest, new ones appended, and the thread comes back with the active operations applied.", setter, (*ops.Service).ApplyContextOperations),

	// Memory (seed 004): the policy that keeps a thread in budget by
	// itself, with ordinary operations, and the seed's tiers.
	def("get_memory_policy", "A session's memory policy (nil: weft changes nothing by itself) and the file's defaults for new sessions and for those the context proxy starts.", readOnly, memory.GetMemoryPolicy),
	def("set_memory_policy", "Set a session's memory policy (or, with scope, the file's defaults): the latest max_active_turns stay raw, older turns are digested summary_turn_count at a time, past max_summaries the oldest go into one archive summary; budget_tokens compacts down to target_tokens; old tool outputs over tool_output_min_tokens become stubs. The fields given change, the rest stay. Every change it makes is an operation by memory, to switch off or revert; what is reverted is not made again. A session's new policy applies at once.", setter, memory.SetMemoryPolicy),
	def("summarize_conversation", "Digest the oldest active turns now (summary_turn_count of them, never the latest), whatever the thresholds: the seed's forceSummarize, as a reversible digest by memory.", edit, memory.SummarizeConversation),
	def("get_tiered_history", "A session's memory in tiers: the preamble, the active turns (raw, after the last summary), the summaries and the archive, each with its turns, items, tokens and time span.", readOnly, memory.GetTieredHistory),
	def("format_history_for_prompt", "The session's memory as text for a prompt within max_tokens (default the policy's, 2000): the summaries, then the latest turns, oldest first.", readOnly, memory.FormatHistoryForPrompt),

	// Startup (seed 003).
	def("get_startup_context", "The startup package by recency, not search: the latest summaries and ALL unsummarized turns.", readOnly, reads.GetStartupContext),
}

// All returns every tool, in a stable order.
func All() []*Tool { return slices.Clone(registry) }

// Lookup finds a tool by name.
func Lookup(name string) (*Tool, bool) {
	i := slices.IndexFunc(registry, func(t *Tool) bool { return t.Name == name })
	if i < 0 {
		return nil, false
	}
	return registry[i], true
}

// Names lists the tools' names.
func Names() []string {
	names := make([]string, len(registry))
	for i, t := range registry {
		names[i] = t.Name
	}
	return names
}

// Invoke runs the tool on arguments of its own type (ArgsType, or a
// pointer to one), for callers in this process that hold typed values;
// the result is of ResultType.
func (t *Tool) Invoke(ctx context.Context, s *ops.Service, args any) (any, error) {
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
func (t *Tool) Call(ctx context.Context, s *ops.Service, raw json.RawMessage) (any, error) {
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
	args, err := jsonargs.Decode(t.Name, t.ArgsType, raw)
	if err != nil {
		return nil, invalid(err)
	}
	return args, nil
}

// ArgNames lists the tool's argument names.
func (t *Tool) ArgNames() []string { return jsonargs.Names(t.ArgsType) }

// ArgsFromPairs turns key=value words (as typed on a command line) into
// the tool's JSON arguments, reading each value by its argument's type:
// strings as they are, numbers and booleans parsed, lists as JSON or
// comma-separated, objects as JSON.
func (t *Tool) ArgsFromPairs(pairs []string) (json.RawMessage, error) {
	raw, err := jsonargs.FromPairs(t.Name, t.ArgsType, pairs)
	if err != nil {
		return nil, invalid(err)
	}
	return raw, nil
}

// invalid makes a refusal of the arguments an ops.Error of kind
// ErrInvalid, as every face maps it.
func invalid(err error) error { return &ops.Error{Kind: ops.ErrInvalid, Msg: err.Error()} }
