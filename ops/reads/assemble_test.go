package reads_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/assemble"
	"weft/ops/assemble/assembletest"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

func TestAssembleFormats(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	msgs := []model.NewMessage{
		{Role: model.RoleSystem, Content: "You are terse."},
		{Role: model.RoleUser, Content: "Which files are there?"},
	}
	msgs = append(msgs, opstest.ToolTurn("call_1", "ls", `{"path":"."}`, "main.go go.mod", 0)...)
	msgs = append(msgs,
		model.NewMessage{Role: model.RoleAssistant, Content: "main.go and go.mod."},
		model.NewMessage{Role: model.RoleUser, Content: "And the tests?"},
	)
	msgs = append(msgs, opstest.ToolTurn("call_2", "ls", `{"path":"./..."}`, "main_test.go", 0)...)
	msgs = append(msgs, model.NewMessage{Role: model.RoleAssistant, Content: "One test file."})
	sid := f.Messages("formats", msgs)
	// A digest over the first exchange leaves a system message mid-thread.
	f.MustCall("digest_messages", `{"start_idx":1,"end_idx":4,"summary":"Listed the files: main.go, go.mod."}`)

	tests := []struct {
		format string
		check  func(t *testing.T, r reads.AssembleResult)
	}{
		{"openai", func(t *testing.T, r reads.AssembleResult) {
			assembletest.CheckOpenAI(t, r.Messages)
			roles := []string{}
			for _, m := range r.Messages {
				roles = append(roles, string(m.Role))
			}
			if got := strings.Join(roles, " "); got != "system system user assistant tool assistant" {
				t.Errorf("roles %q", got)
			}
			if r.Messages[1].Content != "Listed the files: main.go, go.mod." || r.Messages[3].ToolCalls[0].Function.Name != "ls" {
				t.Errorf("messages %+v", r.Messages)
			}
		}},
		{"", func(t *testing.T, r reads.AssembleResult) {
			if r.Format != "openai" || len(r.Messages) != 6 {
				t.Errorf("default format %q, %d messages", r.Format, len(r.Messages))
			}
		}},
		{"anthropic", func(t *testing.T, r reads.AssembleResult) {
			if r.Anthropic == nil || len(r.Messages) != 0 || r.Text != "" {
				t.Fatalf("anthropic result %+v", r)
			}
			assembletest.CheckAnthropic(t, r.Anthropic)
			// The leading system messages (the summary among them) are
			// the system prompt.
			if r.Anthropic.System != "You are terse.\n\nListed the files: main.go, go.mod." {
				t.Errorf("system %q", r.Anthropic.System)
			}
			first := r.Anthropic.Messages[0].Content[0]
			if first.Type != "text" || first.Text != "And the tests?" {
				t.Errorf("first block %+v", first)
			}
			use := r.Anthropic.Messages[1].Content[0]
			if use.Type != "tool_use" || use.Name != "ls" || string(use.Input) != `{"path":"./..."}` {
				t.Errorf("tool_use %+v", use)
			}
		}},
		{"text", func(t *testing.T, r reads.AssembleResult) {
			if !strings.HasPrefix(r.Text, "system: You are terse.\n\nsystem: Listed the files") || !strings.Contains(r.Text, "assistant: One test file.") {
				t.Errorf("text %q", r.Text)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			r := f.MustCall("assemble_context", fmt.Sprintf(`{"session_id":%q,"format":%q}`, sid, tt.format)).(reads.AssembleResult)
			if r.Count != 6 || r.LeftOut != 0 || len(r.Omitted) != 0 || r.SummariesIncluded != 1 {
				t.Errorf("count %d, left out %d %v, summaries %d", r.Count, r.LeftOut, r.Omitted, r.SummariesIncluded)
			}
			if r.Tokens != f.View(sid).Tokens {
				t.Errorf("tokens %d, the view has %d", r.Tokens, f.View(sid).Tokens)
			}
			tt.check(t, r)
		})
	}
}

func TestAssembleMaxTokens(t *testing.T) {
	t.Parallel()
	type rng struct {
		start, end int
		reason     string
	}
	tests := []struct {
		name   string
		msgs   []model.NewMessage
		digest string // digest_messages arguments, if any
		args   string
		kept   string // contents of the kept items, space-separated numbers or names
		ranges []rng
	}{
		{name: "all fits", msgs: opstest.Even(10, 100), args: `{"max_tokens":1000}`, kept: "1 2 3 4 5 6 7 8 9 10"},
		{name: "the oldest go", msgs: opstest.Even(20, 100), args: `{"max_tokens":1000}`, kept: "11 12 13 14 15 16 17 18 19 20",
			ranges: []rng{{0, 9, "max_tokens"}}},
		{name: "newest alone", msgs: opstest.Even(5, 100), args: `{"max_tokens":150}`, kept: "5", ranges: []rng{{0, 3, "max_tokens"}}},
		{name: "a summary stands in for older turns", msgs: opstest.Even(20, 100), digest: `{"start_idx":2,"end_idx":9,"summary":"Early work."}`,
			args: `{"max_tokens":1000}`, kept: "S 12 13 14 15 16 17 18 19 20", ranges: []rng{{0, 1, "max_tokens"}, {3, 3, "max_tokens"}}},
		{name: "summaries before older turns", msgs: opstest.Even(20, 100), digest: `{"start_idx":0,"end_idx":5,"summary":"Setup."}`,
			args: `{"max_tokens":760}`, kept: "S 14 15 16 17 18 19 20", ranges: []rng{{1, 7, "max_tokens"}}},
		{name: "the system prompt stays", msgs: append([]model.NewMessage{{Role: model.RoleSystem, Content: "Be brief.", Tokens: 50}}, opstest.Even(10, 100)...),
			args: `{"max_tokens":350}`, kept: "Be 8 9 10", ranges: []rng{{1, 7, "max_tokens"}}},
		{name: "max_messages first", msgs: opstest.Even(20, 100), args: `{"max_tokens":1000,"max_messages":4}`, kept: "17 18 19 20",
			ranges: []rng{{0, 15, "max_messages"}}},
		{name: "a result without its call goes", msgs: append(append(opstest.Even(2, 100), opstest.ToolTurn("c1", "ls", `{}`, "x", 100)...), opstest.Even(2, 100)...),
			args: `{"max_tokens":350}`, kept: "1 2", ranges: []rng{{0, 3, "max_tokens"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := toolstest.New(t)
			sid := f.Messages(tt.name, tt.msgs)
			if tt.digest != "" {
				f.MustCall("digest_messages", tt.digest)
			}
			r := f.MustCall("assemble_context", tt.args).(reads.AssembleResult)
			var got []string
			for _, m := range r.Messages {
				word := strings.Fields(m.Content)
				switch {
				case m.Role == model.RoleSystem && strings.HasSuffix(m.Content, "."):
					got = append(got, map[bool]string{true: "Be", false: "S"}[m.Content == "Be brief."])
				case len(word) == 2:
					got = append(got, word[1])
				default:
					got = append(got, "?"+m.Content)
				}
			}
			if strings.Join(got, " ") != tt.kept {
				t.Fatalf("kept %q, want %q", strings.Join(got, " "), tt.kept)
			}
			var gotRanges []rng
			left := 0
			for _, o := range r.Omitted {
				gotRanges = append(gotRanges, rng{o.StartIdx, o.EndIdx, o.Reason})
				left += o.Count
				v := f.View(sid)
				if o.FirstID != v.ID(v.Items[o.StartIdx]) || o.LastID != v.ID(v.Items[o.EndIdx]) || o.Count != o.EndIdx-o.StartIdx+1 {
					t.Errorf("range %+v does not describe its items", o)
				}
			}
			if !slices.Equal(gotRanges, tt.ranges) {
				t.Errorf("omitted %v, want %v", gotRanges, tt.ranges)
			}
			v := f.View(sid)
			if left != r.LeftOut || r.Count+r.LeftOut != v.Len() || r.Tokens+r.LeftOutTokens != v.Tokens {
				t.Errorf("count %d + left out %d (listed %d) != %d items; tokens %d + %d != %d", r.Count, r.LeftOut, left, v.Len(), r.Tokens, r.LeftOutTokens, v.Tokens)
			}
			if r.Tokens > r.MaxTokens {
				t.Errorf("tokens %d over the budget %d", r.Tokens, r.MaxTokens)
			}
		})
	}
}

func TestAssembleWithPreferencesAndBudget(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Messages("prefs", opstest.Even(30, 100))
	f.MustCall("request_context_slice", `{"start_message_index":10,"end_message_index":19}`)
	r := f.MustCall("assemble_context", `{"max_tokens":500,"format":"text"}`).(reads.AssembleResult)
	if r.Preferences == nil || r.Count != 5 || !strings.HasPrefix(r.Text, "assistant: message 16\n") {
		t.Fatalf("count %d, prefs %v, text %q", r.Count, r.Preferences, r.Text)
	}
	want := []assemble.OmittedRange{
		{StartIdx: 0, EndIdx: 9, FirstID: "m1", LastID: "m10", Count: 10, Tokens: 1000, Reason: "not requested"},
		{StartIdx: 10, EndIdx: 14, FirstID: "m11", LastID: "m15", Count: 5, Tokens: 500, Reason: "max_tokens"},
		{StartIdx: 20, EndIdx: 29, FirstID: "m21", LastID: "m30", Count: 10, Tokens: 1000, Reason: "not requested"},
	}
	if !slices.Equal(r.Omitted, want) {
		t.Errorf("omitted %+v\nwant %+v", r.Omitted, want)
	}
	// Used once: the next assembly is the whole thread again.
	r = f.MustCall("assemble_context", `{"max_tokens":500}`).(reads.AssembleResult)
	if r.Preferences != nil || r.Messages[len(r.Messages)-1].Content != "message 30" {
		t.Errorf("second assembly: prefs %v, last %+v", r.Preferences, r.Messages[len(r.Messages)-1])
	}
}

func TestAssembleKeepsToolPairsWhenCutting(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	var msgs []model.NewMessage
	for k := range 30 {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("step %d", k), Tokens: 30})
		msgs = append(msgs, opstest.ToolTurn(fmt.Sprintf("call_%d", k), "run", fmt.Sprintf(`{"k":%d}`, k), "ok", 40+k)...)
		msgs = append(msgs, model.NewMessage{Role: model.RoleAssistant, Content: "done", Tokens: 20})
	}
	f.Messages("tools", msgs)
	// Leave results without calls and calls without results about.
	f.MustCall("snip_messages", `{"start_idx":41,"end_idx":41}`)
	f.MustCall("digest_messages", `{"start_idx":61,"end_idx":62,"summary":"Ran step 15."}`)
	adjusted := 0
	for budget := 60; budget <= 4000; budget += 173 {
		for _, format := range []string{"openai", "anthropic"} {
			r := f.MustCall("assemble_context", fmt.Sprintf(`{"max_tokens":%d,"format":%q}`, budget, format)).(reads.AssembleResult)
			if r.Tokens > budget {
				t.Fatalf("budget %d: %d tokens", budget, r.Tokens)
			}
			adjusted += len(r.Adjustments)
			if format == "openai" {
				assembletest.CheckOpenAI(t, r.Messages)
			} else {
				assembletest.CheckAnthropic(t, r.Anthropic)
			}
		}
	}
	if adjusted == 0 {
		t.Errorf("no assembly reported folding the unpaired call and result")
	}
}

func TestAssembleRefusals(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Messages("refusals", opstest.Even(6, 100))
	f.MustCall("request_context_slice", `{"start_message_index":1,"end_message_index":3}`)
	tests := []struct {
		args string
		kind error
		says string
	}{
		{`{"format":"xml"}`, ops.ErrInvalid, `format "xml" is not openai, anthropic or text`},
		{`{"max_tokens":-5}`, ops.ErrInvalid, "max_tokens -5 is negative"},
		{`{"max_messages":-1}`, ops.ErrInvalid, "max_messages -1 is negative"},
		{`{"max_tokens":99}`, ops.ErrInvalid, "max_tokens 99 is too small: nothing fits, and the newest item (3, m4) alone has 100 tokens"},
		{`{"session_id":"nosuchsession"}`, ops.ErrNotFound, `session "nosuchsession" not found`},
		{`{"max_tokens":"lots"}`, ops.ErrInvalid, "argument max_tokens must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			before := f.FileHash()
			_, err := f.Call("assemble_context", tt.args)
			if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.says) {
				t.Fatalf("error %v, want %v saying %q", err, tt.kind, tt.says)
			}
			if f.FileHash() != before {
				t.Errorf("the database file changed")
			}
		})
	}
	// The refused requests left the preferences pending.
	r := f.MustCall("assemble_context", fmt.Sprintf(`{"session_id":%q}`, sid)).(reads.AssembleResult)
	if r.Preferences == nil || r.Count != 3 {
		t.Fatalf("preferences were consumed by a refused request: %+v", r)
	}
}

// BenchmarkAssembleBudget1M is assemble_context with a token budget on a
// warm 1M-message session with 10k operations: the tiers over heads, the
// list of what was left out (a walk over the thread), and the bodies of
// what fits.
func BenchmarkAssembleBudget1M(b *testing.B) {
	path, sid := opstest.BenchFile(b, 1_000_000, 200, 10_000)
	svc := opstest.BenchService(b, path)
	ctx := context.Background()
	if _, _, err := svc.View(sid); err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{"openai", "anthropic"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				r, err := reads.AssembleContext(svc, ctx, reads.AssembleArgs{SessionID: sid, Format: format, MaxTokens: new(8000)})
				if err != nil || r.Count == 0 || r.Tokens > 8000 {
					b.Fatal(err, r.Count, r.Tokens)
				}
			}
		})
	}
}

func TestAssembleListsAtMostSoManyRuns(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	var msgs []model.NewMessage
	for k := range 450 {
		word := "other"
		if k%3 == 0 {
			word = "marked"
		}
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("%s %d", word, k), Tokens: 10})
	}
	f.Messages("runs", msgs)
	// Every third message matches: 150 kept, with 150 runs of two left
	// out between and after them (the slice itself is the first match).
	f.MustCall("request_context_slice", `{"start_message_index":0,"end_message_index":0,"include_search_results":true,"query":"marked"}`)
	r := f.MustCall("assemble_context", `{"format":"text"}`).(reads.AssembleResult)
	if r.Count != 150 || r.LeftOut != 300 || len(r.Omitted) != assemble.MaxOmittedRanges || r.OmittedNotListed != 150-assemble.MaxOmittedRanges {
		t.Fatalf("count %d, left out %d in %d listed runs and %d not listed", r.Count, r.LeftOut, len(r.Omitted), r.OmittedNotListed)
	}
	for k, o := range r.Omitted {
		if o.StartIdx != 3*k+1 || o.EndIdx != 3*k+2 || o.Count != 2 || o.Reason != "not requested" || o.LastID != model.MessageID(uint64(3*k+3)) {
			t.Fatalf("run %d: %+v", k, o)
		}
	}
}
