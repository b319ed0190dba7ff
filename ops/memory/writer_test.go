package memory_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/memory"
	"weft/ops/opstest"
	"weft/ops/summary"
)

// standIn is a chat-completions endpoint that answers every summary
// with the same text, counting what it was asked.
func standIn(t *testing.T, answer string) (*httptest.Server, *atomic.Int32) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 || !strings.Contains(req.Messages[1].Content, "Question") {
			http.Error(w, "not a summary request", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"model":"small-model","choices":[{"message":{"role":"assistant","content":`+mustJSON(answer)+`}}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func withEndpoint(t *testing.T, url string) *opstest.Fixture {
	f := opstest.New(t)
	f.Svc = ops.New(f.St, ops.WithSummaryEndpoint(summary.Endpoint{URL: url + "/v1", Model: "small-model"}))
	return f
}

// A digest made before a model's summary was ready stands with the
// extractive one, which the model's replaces when it is written: a
// revise of that summary by memory, saying what wrote it.
func TestModelSummaryReplacesTheExtractiveOne(t *testing.T) {
	t.Parallel()
	srv, _ := standIn(t, "The limiter was tuned over five rounds: a token bucket, refilled at a fixed rate.")
	f := withEndpoint(t, srv.URL)
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 12))
	res := setSeed(t, f, sid)
	if len(res.Check.Made) != 1 || res.Check.Made[0].Source != ops.SourceExtractive {
		t.Fatalf("made %+v: want the extractive summary first", res.Check.Made)
	}
	memory.Settle(f.Svc)
	ops, err := f.Svc.Operations(sid)
	if err != nil {
		t.Fatal(err)
	}
	last := ops[len(ops)-1]
	if last.Type != model.OpRevise || last.Author != model.MemoryAuthor || last.Payload.SummarySource != "endpoint" || last.Payload.SummaryModel != "small-model" ||
		last.Targets[0] != model.SyntheticID(res.Check.Made[0].OperationID, 0) {
		t.Fatalf("the last operation is %+v, want memory's revise of the summary", last)
	}
	_, v, _ := f.Svc.View(sid)
	if !v.IsSummary(0) || !strings.Contains(v.Synth[v.Items[0].Synth].Content, "five rounds") {
		t.Errorf("item 0 is not the model's summary: %+v", v.Items[0])
	}
	tiers, _ := memory.GetTieredHistory(f.Svc, ctx, memory.TieredHistoryArgs{SessionID: sid})
	if len(tiers.Summaries) != 1 || tiers.Active.Turns != 7 {
		t.Errorf("tiers: %d summaries, %d active turns", len(tiers.Summaries), tiers.Active.Turns)
	}
}

// From the lower watermark (two turns before the most), the summary of
// the turns that will go next is written ahead: the digest, when the
// threshold is crossed, takes it at once, and nothing is revised after.
func TestModelSummaryIsPreparedAhead(t *testing.T) {
	t.Parallel()
	srv, asked := standIn(t, "Prepared: the first five rounds settled on a token bucket.")
	f := withEndpoint(t, srv.URL)
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 9))
	if res := setSeed(t, f, sid); len(res.Check.Made) != 0 {
		t.Fatalf("9 turns: made %+v", res.Check.Made)
	}
	memory.Settle(f.Svc)
	if asked.Load() != 1 {
		t.Fatalf("the endpoint was asked %d times, want once (the next summary, ahead)", asked.Load())
	}
	if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: turns(9, 2)}); err != nil {
		t.Fatal(err)
	}
	res, err := memory.Check(ctx, f.Svc, sid)
	if err != nil || len(res.Made) != 1 || res.Made[0].Source != "endpoint" {
		t.Fatalf("11 turns: made %+v (%v), want the digest with the summary written ahead", res.Made, err)
	}
	memory.Settle(f.Svc)
	all, _ := f.Svc.Operations(sid)
	for _, op := range all {
		if op.Type == model.OpRevise {
			t.Errorf("a summary written ahead was revised: %+v", op)
		}
	}
}

// A model that fails leaves the extractive summary standing, and the
// policy goes on.
func TestModelSummaryThatFailsLeavesTheExtractiveOne(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	f := withEndpoint(t, srv.URL)
	sid := f.Messages("limiter", turns(0, 12))
	res := setSeed(t, f, sid)
	memory.Settle(f.Svc)
	all, _ := f.Svc.Operations(sid)
	if len(res.Check.Made) != 1 || len(all) != 1 || all[0].Payload.SummarySource != ops.SourceExtractive {
		t.Errorf("made %+v, operations %+v", res.Check.Made, all)
	}
}
