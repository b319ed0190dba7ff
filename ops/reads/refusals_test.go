package reads_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/tools/toolstest"
)

// TestBadReadInputChangesNothing: a read refused for its arguments says
// why, with the kind of error, and leaves the file as it was.
func TestBadReadInputChangesNothing(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("bad input", 12)
	tests := []struct {
		tool, args string
		kind       error
		says       string
	}{
		{"get_turns_since", `{"timestamp":"next tuesday"}`, ops.ErrInvalid, "accepted forms"},
		{"get_turns_since", `{"timestamp":""}`, ops.ErrInvalid, "timestamp is required"},
		{"get_turns_since", `{"timestamp":"-2h","limit":-1}`, ops.ErrInvalid, "limit -1 is negative"},
		{"get_turns_around", `{"timestamp":"2026-01-26T09:00:00Z","count":-1}`, ops.ErrInvalid, "count -1 is negative"},
		{"get_conversation_context", `{"turns":-1}`, ops.ErrInvalid, "turns -1 is negative"},
		{"get_conversation_context", `{}`, ops.ErrInvalid, "turns is missing"},
		{"get_message_range", `{"start_idx":0,"end_idx":12}`, ops.ErrInvalid, "end_idx 12 is past the end"},
		{"get_message_range", `{"start_idx":0,"end_idx":1,"view":"pretty"}`, ops.ErrInvalid, `view "pretty"`},
		{"search_session_history", `{"query":""}`, ops.ErrInvalid, "query is empty"},
		{"search_session_history", `{"query":"x","mode":"regex"}`, ops.ErrInvalid, `mode "regex"`},
		{"request_context_slice", `{"start_message_index":4,"end_message_index":2}`, ops.ErrInvalid, "after end_message_index"},
		{"get_startup_context", `{"summaries":-2}`, ops.ErrInvalid, "summaries -2 is negative"},
		{"assemble_context", `{"format":"xml"}`, ops.ErrInvalid, `format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			f.CheckRefusal(t, sid, tt.tool, tt.args, tt.kind, tt.says)
		})
	}
}

// Arguments at the edges of their types are refused with a clear error,
// never a panic that takes the process down.
func TestHostileArgumentsAreRefused(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("hostile", 30)
	for _, args := range []string{
		fmt.Sprintf(`{"timestamp":%q,"count":9223372036854775807,"before_ratio":1}`, at(5)),
		fmt.Sprintf(`{"timestamp":%q,"count":9223372036854775807,"before_ratio":0.5}`, at(5)),
		fmt.Sprintf(`{"timestamp":%q,"count":4611686018427387904,"before_ratio":1e-300}`, at(5)),
	} {
		_, err := f.Call("get_turns_around", args)
		if !errors.Is(err, ops.ErrInvalid) || !strings.Contains(err.Error(), "count") {
			t.Errorf("get_turns_around %s: %v, want a refusal about count", args, err)
		}
	}
}

// TestContextPreferencesAreWrittenAside: pending preferences go through
// the write path (an event says so) but are not a change to the thread:
// the version stays, and an assembly with nothing pending writes nothing.
func TestContextPreferencesAreWrittenAside(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("prefs", 10)
	before, _, _ := f.Svc.View(sid)
	ch, done := f.Svc.Subscribe()
	defer done()
	f.MustCall("request_context_slice", `{"start_message_index":2,"end_message_index":4}`)
	f.MustCall("assemble_context", `{}`)
	f.MustCall("assemble_context", `{}`) // nothing pending now
	evs := opstest.Events(ch)
	if len(evs) != 2 || evs[0].Kind != ops.EventPreferences || evs[1].Kind != ops.EventPreferences {
		t.Fatalf("events %+v", evs)
	}
	for _, e := range evs {
		if e.Version != before.Version {
			t.Errorf("event %+v moved the version from %d", e, before.Version)
		}
	}
	if after, _, _ := f.Svc.View(sid); after.Version != before.Version || len(after.Changes) != len(before.Changes) {
		t.Errorf("version %d → %d, changes %d → %d", before.Version, after.Version, len(before.Changes), len(after.Changes))
	}
}
