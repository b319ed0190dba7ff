package reads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"weft/formats"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/ops/tools/toolstest"
)

// diffCall runs diff_session by name with JSON arguments.
func diffCall(f *toolstest.Fixture, args string) reads.DiffSessionResult {
	f.T.Helper()
	return f.MustCall("diff_session", args).(reads.DiffSessionResult)
}

// TestDiffSessionShowsEachOperation: a hunk for each operation that
// changes what the model gets, in thread order, its lines and tokens;
// the switched-off and reverted ones listed as changing nothing; the
// text a unified diff of the same, with the messages' text.
func TestDiffSessionShowsEachOperation(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("diff", 12)
	opID := func(tool, args string) string {
		t.Helper()
		return f.MustCall(tool, args).(ops.OpResult).OperationID
	}
	dg := opID("digest_messages", `{"start_idx":2,"end_idx":4,"summary":"Three early messages."}`) // m3..m5 -> 1 item
	// The thread is now m1 m2 d m6 ... m12: index 4 is m7.
	sn := opID("snip_messages", `{"start_idx":4,"end_idx":4}`)
	off := opID("snip_messages", `{"start_idx":0,"end_idx":0}`)
	f.MustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, off))
	gone := opID("insert_messages", `{"after_idx":-1,"messages":[{"role":"system","content":"Gone."}]}`)
	f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, gone))
	ins := opID("insert_messages", `{"after_id":"m9","messages":[{"role":"user","content":"An aside."}]}`)

	res := diffCall(f, `{}`)
	if res.SessionID != sid || !res.Complete || res.Omitted != 0 {
		t.Fatalf("result %+v", res)
	}
	var kinds []string
	for _, h := range res.Hunks {
		var lines []string
		for _, l := range h.Lines {
			lines = append(lines, l.Sign+string(l.ID))
		}
		kinds = append(kinds, fmt.Sprintf("%s %s", h.Op.Type, strings.Join(lines, " ")))
	}
	want := []string{
		"digest -m3 -m4 -m5 +" + dg + "/0",
		"snip -m7",
		"insert +" + ins + "/0",
	}
	if strings.Join(kinds, " | ") != strings.Join(want, " | ") {
		t.Errorf("hunks\n got %v\nwant %v", kinds, want)
	}
	if h := res.Hunks[1]; h.Op.ID != sn || h.StoredTokens == 0 || h.EffectiveTokens != 0 || h.Messages != 1 {
		t.Errorf("the snip's hunk %+v", h)
	}
	var runs []string
	for _, r := range res.Kept {
		runs = append(runs, fmt.Sprintf("m%d..m%d", r.First, r.Last))
	}
	if strings.Join(runs, " ") != "m1..m2 m6..m6 m8..m9 m10..m12" || res.KeptMessages != 8 {
		t.Errorf("kept runs %v, %d messages kept", runs, res.KeptMessages)
	}
	unchanged := map[string]model.OpStatus{}
	for _, o := range res.Unchanged {
		unchanged[o.ID] = o.Status
	}
	if len(unchanged) != 2 || unchanged[off] != model.StatusInactive || unchanged[gone] != model.StatusReverted {
		t.Errorf("unchanged %v", res.Unchanged)
	}
	_, v, _ := f.Svc.View(sid)
	if res.StoredTokens != v.RawTokens || res.EffectiveTokens != v.Tokens || res.StoredMessages != 12 || res.EffectiveItems != v.Len() {
		t.Errorf("totals %+v, the view has %d → %d tokens, %d items", res, v.RawTokens, v.Tokens, v.Len())
	}
	for _, s := range []string{
		"--- stored     12 messages",
		"@@ digest " + dg + " by ",
		": m3..m5 (3 messages, ",
		"-m3 ", "message 3",
		"+" + dg + "/0", "Three early messages.",
		"@@ snip " + sn,
		"@@ insert " + ins, "after m9", "An aside.",
		" ⋯ m1..m2 kept (2 messages",
		"# 2 operations change nothing the model gets:",
	} {
		if !strings.Contains(res.Text, s) {
			t.Errorf("the text has no %q:\n%s", s, res.Text)
		}
	}
	// Every line of the text is a header, a kept run, a note, or a
	// line of a side.
	for _, line := range strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n") {
		if !regexp.MustCompile(`^(--- |\+\+\+ |@@ .* @@$| ⋯ |# |[-+ ]\S)`).MatchString(line) {
			t.Errorf("a line that is none of a diff's: %q", line)
		}
	}
}

// A diff too large for its budget gives the first hunks, a long one cut
// to its first and last lines, and a cursor that gives the rest, each
// page within the budget; a caller's cap holds without max_tokens.
func TestDiffSessionFitsItsBudget(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("big", 400)
	f.MustCall("snip_messages", `{"start_idx":0,"end_idx":299}`)
	// The thread is now m301..m400: snip every other one of the first 60.
	for i := 0; i < 30; i++ {
		f.MustCall("snip_messages", fmt.Sprintf(`{"start_idx":%d,"end_idx":%d}`, i, i))
	}
	first := diffCall(f, `{"max_tokens":1500}`)
	if first.ResultTokens > 1500 || first.Complete || first.NextCursor == "" || first.Cut == 0 {
		t.Fatalf("result: %d tokens, complete %v, cursor %q, cut %d", first.ResultTokens, first.Complete, first.NextCursor, first.Cut)
	}
	if h := first.Hunks[0]; h.LinesOmitted == 0 || h.Messages != 300 || h.Lines[0].ID != "m1" || h.Lines[len(h.Lines)-1].ID != "m300" {
		t.Errorf("the long hunk: %d lines, %d omitted, %d messages", len(h.Lines), h.LinesOmitted, h.Messages)
	}
	if !strings.Contains(first.Text, "m1..m300 (300 messages, 900 → 0 tokens)") || !strings.Contains(first.Text, "lines left out for the budget") || !strings.Contains(first.Text, "more hunks did not fit") {
		t.Errorf("the text does not say what it left out:\n%s", first.Text)
	}
	seen := map[string]bool{}
	for _, h := range first.Hunks {
		seen[h.Op.ID] = true
	}
	cursor := first.NextCursor
	for page := 0; cursor != "" && page < 40; page++ {
		res := diffCall(f, fmt.Sprintf(`{"session_id":%q,"max_tokens":1500,"cursor":%q}`, sid, cursor))
		if res.ResultTokens > 1500 || len(res.Hunks) == 0 {
			t.Fatalf("page %d: %d tokens, %d hunks", page, res.ResultTokens, len(res.Hunks))
		}
		for _, h := range res.Hunks {
			if seen[h.Op.ID] {
				t.Errorf("hunk %s given twice", h.Op.ID)
			}
			seen[h.Op.ID] = true
		}
		cursor = res.NextCursor
	}
	if len(seen) != 31 {
		t.Errorf("%d hunks over the pages, want 31", len(seen))
	}
	// Without max_tokens, a client's cap holds: its bytes too.
	tool, _ := tools.Lookup("diff_session")
	ctx := reads.WithCap(context.Background(), reads.Cap{Tokens: 3000, Bytes: 6000})
	out, err := tool.Call(ctx, f.Svc, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if b := formats.Marshal(out); len(b) > 6000 || out.(reads.DiffSessionResult).MaxTokens != 3000 {
		t.Errorf("under a cap of 6,000 bytes: %d bytes, max_tokens %d", len(b), out.(reads.DiffSessionResult).MaxTokens)
	}
	f.CheckRefusal(t, sid, "diff_session", `{"max_tokens":20}`, ops.ErrInvalid, "max_tokens 20 is too small")
}
