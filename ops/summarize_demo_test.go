package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/demo"
	"weft/formats/claudecode"
	"weft/model"
	"weft/ops"
	"weft/ops/assemble/assembletest"
	"weft/ops/ingest"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/store/boltstore"
)

// These tests run the summary and assembly tools on the demo thread and
// on a real Claude Code session: threads with tool calls, code, days of
// timestamps and operations already applied.

func demoService(t *testing.T) *ops.Service {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "weft.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return ops.New(st)
}

func demoCall[R any](t *testing.T, svc *ops.Service, tool, args string) R {
	t.Helper()
	tl, ok := tools.Lookup(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	res, err := tl.Call(context.Background(), svc, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res.(R)
}

// demoValid checks an assembly against its provider's rules
// (assembletest): chat-completions tool messages answer an open call of
// the assistant before them, and Messages API roles alternate from the
// user with each tool_result answering a tool_use of the message before.
func demoValid(t *testing.T, r reads.AssembleResult) {
	t.Helper()
	if r.Format == "openai" {
		assembletest.CheckOpenAI(t, r.Messages)
		return
	}
	assembletest.CheckAnthropic(t, r.Anthropic)
}

func TestSummarizeDemoDigression(t *testing.T) {
	svc := demoService(t)
	sid, err := demo.Seed(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := svc.View(sid)
	from, to, _ := demo.Digression()
	start, end := v.IndexOfSeq(uint64(from+1)), v.IndexOfSeq(uint64(to+1))
	if start < 0 || end <= start {
		t.Fatalf("the digression is not in the thread: %d..%d", start, end)
	}
	args := fmt.Sprintf(`{"session_id":%q,"start_idx":%d,"end_idx":%d}`, sid, start, end)
	r := demoCall[ops.SummarizeResult](t, svc, "summarize_message_range", args)
	t.Logf("extractive summary of the digression (%d messages, %d tokens):\n%s", r.MessageCount, r.Tokens, r.Summary)
	if r.Source != ops.SourceExtractive || r.Tokens > 300 || r.MessageCount != end-start+1 || r.InputTokens <= r.Tokens {
		t.Errorf("result %+v", r)
	}
	head := fmt.Sprintf("Messages %d–%d of %q, 2026-03-", start, end, demo.Title)
	if !strings.HasPrefix(r.Summary, head) || strings.Count(r.Summary, "\n- ") < 3 {
		t.Errorf("summary does not start with %q or has few sentences:\n%s", head, r.Summary)
	}
	if again := demoCall[ops.SummarizeResult](t, svc, "summarize_message_range", args); again.Summary != r.Summary {
		t.Errorf("not deterministic")
	}
	stored := demoCall[ops.SummarizeResult](t, svc, "summarize_message_range", strings.TrimSuffix(args, "}")+`,"store":true}`)
	_, after, _ := svc.View(sid)
	if !stored.Stored || after.Len() != v.Len()-(end-start) || after.Status[stored.OperationID] != model.StatusActive {
		t.Errorf("stored %+v: %d items, was %d", stored, after.Len(), v.Len())
	}

	// The whole demo thread, under budgets, stays valid for both providers.
	for _, budget := range []int{0, 200, 1000, 4000, 20000} {
		for _, format := range []string{"openai", "anthropic"} {
			r := demoCall[reads.AssembleResult](t, svc, "assemble_context", fmt.Sprintf(`{"format":%q,"max_tokens":%d}`, format, budget))
			if budget > 0 && r.Tokens > budget || r.Count+r.LeftOut != after.Len() {
				t.Errorf("budget %d: %d tokens, %d + %d items of %d", budget, r.Tokens, r.Count, r.LeftOut, after.Len())
			}
			if budget >= 4000 && r.SummariesIncluded == 0 {
				t.Errorf("budget %d: no summary kept", budget)
			}
			demoValid(t, r)
		}
	}
}

func TestSummarizeRealClaudeCodeSession(t *testing.T) {
	path := filepath.Join("..", "formats", "testdata", "claude-code", "spotter_long_session.jsonl")
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	svc := demoService(t)
	im := ingest.New(context.Background(), svc, ingest.Options{})
	if _, err := claudecode.Read(file, im); err != nil {
		t.Fatal(err)
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	sid := im.Sessions[0].SessionID
	_, v, _ := svc.View(sid)
	if v.Len() < 150 {
		t.Fatalf("%d items imported", v.Len())
	}
	r := demoCall[ops.SummarizeResult](t, svc, "summarize_message_range", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":99,"max_tokens":400}`, sid))
	t.Logf("extractive summary of 100 real messages (%d tokens in, %d out):\n%s", r.InputTokens, r.Tokens, r.Summary)
	if r.Tokens > 400 || r.MessageCount != 100 || !strings.Contains(r.Summary, "2026-02-12 16:") || !strings.Contains(r.Summary, "\nTools: ") || !strings.Contains(r.Summary, "\nFiles: ") {
		t.Errorf("summary:\n%s", r.Summary)
	}
	for _, budget := range []int{500, 8000, 50000} {
		for _, format := range []string{"openai", "anthropic"} {
			r := demoCall[reads.AssembleResult](t, svc, "assemble_context", fmt.Sprintf(`{"session_id":%q,"format":%q,"max_tokens":%d}`, sid, format, budget))
			if r.Tokens > budget || r.Count == 0 || r.LeftOut == 0 {
				t.Errorf("budget %d: %d tokens in %d items, %d left out", budget, r.Tokens, r.Count, r.LeftOut)
			}
			demoValid(t, r)
		}
	}
	// The pre-request hook recognises the imported thread sent back in
	// the chat-completions shape only as far as that shape says the same:
	// here the first message.
	first := demoCall[reads.MessageRangeResult](t, svc, "get_message_range", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":0,"view":"raw"}`, sid)).Messages[0]
	msgs, _ := json.Marshal([]map[string]any{{"role": string(first.Role), "content": first.Content}})
	tl, _ := tools.Lookup("apply_context_operations")
	if _, err := tl.Call(context.Background(), svc, json.RawMessage(fmt.Sprintf(`{"session_id":%q,"messages":%s}`, sid, msgs))); err == nil || !strings.Contains(err.Error(), "the caller sent 1 message, which match the start") {
		t.Errorf("a prefix of an imported thread: %v", err)
	}
}
