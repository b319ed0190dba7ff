package reads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"weft/formats"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// toolRounds makes a session of n rounds of a request, a tool call and
// a tool's output of about size bytes (code, many lines, tabs and
// quotes: what JSON escapes), stored as an import stores them.
func toolRounds(f *toolstest.Fixture, n, size int) string {
	f.T.Helper()
	sid := f.Session("tool rounds", 0)
	var msgs []model.NewMessage
	for k := range n {
		var out strings.Builder
		for line := 0; out.Len() < size; line++ {
			fmt.Fprintf(&out, "\tif err := step%d_%d(\"quoted\"); err != nil {\n\t\treturn err\n\t}\n", k, line)
		}
		call := []model.Part{{Type: model.PartText, Text: "Reading."}, {Type: model.PartToolCall, ToolCallID: fmt.Sprint("c", k), ToolName: "Read", Input: json.RawMessage(`{"file_path":"/x.go"}`)}}
		result := []model.Part{{Type: model.PartToolResult, ToolCallID: fmt.Sprint("c", k), Text: out.String()}}
		msgs = append(msgs,
			model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Round %d: read the file.", k)},
			model.NewMessage{Role: model.RoleAssistant, Content: formats.RenderContent(call), Parts: model.EncodeParts(call)},
			model.NewMessage{Role: model.RoleTool, Content: formats.RenderContent(result), Parts: model.EncodeParts(result)})
	}
	if _, err := f.Svc.AppendMessages(context.Background(), ops.AppendMessagesArgs{SessionID: sid, Messages: msgs}); err != nil {
		f.T.Fatal(err)
	}
	return sid
}

// TestReadsHoldAnyBudget: whatever the budget, from the least to a large
// one, every read's result counts what result_tokens says, exactly, and
// no more than max_tokens; and a result that leaves something out is not
// far under its budget (the estimate is corrected, not trusted).
func TestReadsHoldAnyBudget(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := toolRounds(f, 30, 6000)
	readArgs := map[string]string{
		"get_conversation_context": `"turns":90`,
		"get_startup_context":      `"summaries":2`,
		"get_turns_since":          `"timestamp":"2000-01-01"`,
		"get_turns_around":         `"timestamp":"2000-01-01","count":60`,
		"get_message_range":        `"start_idx":0,"end_idx":89`,
		"search_session_history":   `"query":"quoted","whole":true`,
		"get_session_history":      `"format":"text"`,
		"list_operations":          `"active_only":false`,
	}
	for name, args := range readArgs {
		for _, budget := range []int{reads.MinMaxTokens, 700, 1000, 1500, 2500, 4000, 7000, 12000, reads.DefaultMaxTokens, 30000} {
			res := f.MustCall(name, fmt.Sprintf(`{"session_id":%q,%s,"max_tokens":%d}`, sid, args, budget))
			fit := fitOfValue(res)
			n := reads.CountJSON(res)
			if fit.ResultTokens != n || n > budget || fit.MaxTokens != budget {
				t.Errorf("%s max_tokens=%d: result_tokens %d, max_tokens %d; its JSON counts %d", name, budget, fit.ResultTokens, fit.MaxTokens, n)
			}
			if fit.Omitted > 0 && n < budget*6/10 && budget >= 1000 {
				t.Errorf("%s max_tokens=%d: %d tokens with %d left out", name, budget, n, fit.Omitted)
			}
		}
	}
}

// fitOfValue is the Fit a read's result (a value) embeds.
func fitOfValue(res any) *reads.Fit {
	p := reflect.New(reflect.TypeOf(res))
	p.Elem().Set(reflect.ValueOf(res))
	return reads.FitPart(p.Interface())
}

// TestTextAppearsOnce: a tool's output is the content of its message,
// and its part keeps only the structure; a part whose text the content
// does not show (thinking) keeps it.
func TestTextAppearsOnce(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("parts", 0)
	output := "line one of the output\nline two"
	result := []model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Text: output}}
	answer := []model.Part{{Type: model.PartThinking, Text: "weighing the two lines"}, {Type: model.PartText, Text: "Two lines."}}
	msgs := []model.NewMessage{
		{Role: model.RoleTool, Content: formats.RenderContent(result), Parts: model.EncodeParts(result)},
		{Role: model.RoleAssistant, Content: "Two lines.", Parts: model.EncodeParts(answer)},
	}
	if _, err := f.Svc.AppendMessages(context.Background(), ops.AppendMessagesArgs{SessionID: sid, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	r := f.MustCall("get_message_range", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":1}`, sid)).(reads.MessageRangeResult)
	b := formats.Marshal(r)
	if n := strings.Count(string(b), "line one of the output"); n != 1 {
		t.Errorf("the tool's output appears %d times: %s", n, b)
	}
	tool, said := r.Messages[0], r.Messages[1]
	if len(tool.Parts) != 1 || tool.Parts[0].Type != model.PartToolResult || tool.Parts[0].ToolCallID != "c1" || tool.Parts[0].Text != "" {
		t.Errorf("the tool result's part: %+v", tool.Parts)
	}
	if len(said.Parts) != 2 || said.Parts[0].Text != "weighing the two lines" || said.Parts[1].Text != "" {
		t.Errorf("the answer's parts: %+v", said.Parts)
	}
	if n := tokens.Count(string(b)); r.ResultTokens != n {
		t.Errorf("result_tokens %d, the JSON counts %d", r.ResultTokens, n)
	}
}

// TestReadFitsInOnePassWhereItCan: a read whose result is complete
// within its budget runs once; one that must leave things out runs again
// only to correct its estimate, a few times at most.
func TestReadFitsInOnePassWhereItCan(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := toolRounds(f, 30, 6000)
	passes := 0
	read := reads.FitMessageRange(func(s *ops.Service, ctx context.Context, a reads.MessageRangeArgs) (reads.MessageRangeResult, error) {
		passes++
		return reads.MessageRangeUnfitted(s, ctx, a)
	})
	budget := func(n int) *int { return &n }
	for _, tc := range []struct {
		end, budget, most int
	}{
		{2, reads.DefaultMaxTokens, 1}, // complete: one pass
		{89, reads.NoLimit, 1},         // no limit: one pass
		{89, 4000, 5},                  // left out: corrected, at most four times more
	} {
		passes = 0
		res, err := read(f.Svc, context.Background(), reads.MessageRangeArgs{SessionID: sid, StartIdx: budget(0), EndIdx: budget(tc.end), MaxTokens: budget(tc.budget)})
		if err != nil {
			t.Fatal(err)
		}
		if passes > tc.most || passes < 1 {
			t.Errorf("0..%d in %d tokens (complete %v): %d passes, want at most %d", tc.end, tc.budget, res.Complete, passes, tc.most)
		}
		t.Logf("0..%d in %d tokens: %d passes, %d tokens, complete %v", tc.end, tc.budget, passes, res.ResultTokens, res.Complete)
	}
}

// TestReadFitsItsCallersCap: a read called without max_tokens by a
// caller with a cap (an MCP client that keeps only so many bytes whole)
// fits both the cap's tokens and its bytes, in the passes fitTo makes
// for tokens alone (at most five), and says the cap's tokens as its
// budget; an explicit max_tokens is the caller's own choice and is not
// held to the bytes.
func TestReadFitsItsCallersCap(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := toolRounds(f, 30, 6000)
	passes := 0
	read := reads.FitMessageRange(func(s *ops.Service, ctx context.Context, a reads.MessageRangeArgs) (reads.MessageRangeResult, error) {
		passes++
		return reads.MessageRangeUnfitted(s, ctx, a)
	})
	n := func(n int) *int { return &n }
	for _, c := range []reads.Cap{{Tokens: 2500, Bytes: 9000}, {Tokens: 10_000, Bytes: 40_000}, {Tokens: 3000}} {
		passes = 0
		ctx := reads.WithCap(context.Background(), c)
		res, err := read(f.Svc, ctx, reads.MessageRangeArgs{SessionID: sid, StartIdx: n(0), EndIdx: n(89)})
		if err != nil {
			t.Fatal(err)
		}
		size := len(formats.Marshal(res))
		if res.MaxTokens != c.Tokens || res.ResultTokens > c.Tokens || (c.Bytes > 0 && size > c.Bytes) {
			t.Errorf("cap %v: max_tokens %d, %d tokens, %d bytes", c, res.MaxTokens, res.ResultTokens, size)
		}
		if passes > 5 {
			t.Errorf("cap %v: %d passes, want at most 5", c, passes)
		}
		if c.Bytes > 0 && size < c.Bytes*6/10 {
			t.Errorf("cap %v: %d bytes, less than six tenths of what the caller keeps", c, size)
		}
		t.Logf("cap %v: %d passes, %d tokens, %d bytes, %d messages", c, passes, res.ResultTokens, size, len(res.Messages))
	}
	ctx := reads.WithCap(context.Background(), reads.Cap{Tokens: 2500, Bytes: 9000})
	res, err := read(f.Svc, ctx, reads.MessageRangeArgs{SessionID: sid, StartIdx: n(0), EndIdx: n(89), MaxTokens: n(8000)})
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxTokens != 8000 || len(formats.Marshal(res)) <= 9000 {
		t.Errorf("max_tokens 8000 given: max_tokens %d, %d bytes: held to the cap's bytes", res.MaxTokens, len(formats.Marshal(res)))
	}
}

// A cap reads back as it is written; one that no read takes is refused.
func TestParseCap(t *testing.T) {
	t.Parallel()
	c := reads.Cap{Tokens: 2500, Bytes: 9000}
	if got, err := reads.ParseCap(c.String()); err != nil || got != c {
		t.Errorf("ParseCap(%q) = %v, %v", c.String(), got, err)
	}
	for _, bad := range []string{"", "tokens=10 bytes=0", "tokens=2500 bytes=-1", "bytes=9000", "tokens=x bytes=1"} {
		if _, err := reads.ParseCap(bad); err == nil {
			t.Errorf("ParseCap(%q) took it", bad)
		}
	}
}
