package memory

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"weft/formats"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/summary"
	"weft/store"
)

// Writer writes a summary with a model: the instructions and the
// transcript, the most tokens it may be; it returns the text and the
// model that wrote it.
type Writer func(ctx context.Context, instructions, transcript string, maxTokens int) (text, byModel string, err error)

// The summarizer a policy names, once chosen: what writes with a model,
// and the source its summaries record.
type writer struct {
	write  Writer
	source string
}

type upstreamKey struct{}

type modelKey struct{}

// PolicyModel is the model the policy names for its summaries, for an
// upstream Writer to ask; "" leaves it to the Writer (the request's).
func PolicyModel(ctx context.Context) string {
	m, _ := ctx.Value(modelKey{}).(string)
	return m
}

// WithUpstream is ctx for a check made while the context proxy carries a
// request: w asks the proxy's provider with the credentials of that
// request, held for that call only.
func WithUpstream(ctx context.Context, w Writer) context.Context {
	return context.WithValue(ctx, upstreamKey{}, w)
}

// writerFor is what writes a policy's summaries with a model: the one it
// names if it is at hand (upstream: a request in flight through the
// proxy; endpoint: WEFT_SUMMARY_URL), or with none named the first at
// hand; nil for the extractive summaries alone. The client's model
// (sampling) answers only while its tool call lasts, too short for
// summaries written in the background.
func writerFor(ctx context.Context, s *ops.Service, p *model.MemoryPolicy) *writer {
	up, _ := ctx.Value(upstreamKey{}).(Writer)
	ep := s.SummaryEndpoint()
	endpoint := func() *writer {
		if !ep.Configured() {
			return nil
		}
		if p.Model != "" {
			ep.Model = p.Model
		}
		return &writer{write: ep.Ask, source: summary.SourceEndpoint}
	}
	if up != nil && p.Model != "" {
		named, inner := p.Model, up
		up = func(ctx context.Context, instructions, transcript string, maxTokens int) (string, string, error) {
			return inner(context.WithValue(ctx, modelKey{}, named), instructions, transcript, maxTokens)
		}
	}
	switch p.Summarizer {
	case model.SummarizerExtractive, model.SummarizerSampling:
		return nil
	case model.SummarizerEndpoint:
		return endpoint()
	case model.SummarizerUpstream:
		if up == nil {
			return nil
		}
		return &writer{write: up, source: model.SummarizerUpstream}
	}
	if up != nil {
		return &writer{write: up, source: model.SummarizerUpstream}
	}
	return endpoint()
}

// writing keeps the summaries a service's policies have asked models
// for: those prepared ahead of the digest that will take them (by the
// digest's targets), and the jobs under way.
type writing struct {
	mu       sync.Mutex
	prepared map[string]preparedSummary // by session and targets
	asked    map[string]bool            // prepared or replacing, under way
	jobs     sync.WaitGroup
}

type preparedSummary struct {
	text, source, model string
}

type writingKey struct{}

func writingOf(s *ops.Service) *writing {
	return s.Keep(writingKey{}, func() any {
		return &writing{prepared: map[string]preparedSummary{}, asked: map[string]bool{}}
	}).(*writing)
}

// Settle waits until the summaries the policies of s asked models for
// are written (or failed).
func Settle(s *ops.Service) { writingOf(s).jobs.Wait() }

// maxPrepared bounds the summaries kept ready per service.
const maxPrepared = 64

// summaryWait bounds one model's summary.
const summaryWait = 2 * time.Minute

func preparedKey(sid string, targets []model.ItemID) string {
	var b strings.Builder
	b.WriteString(sid)
	for _, t := range targets {
		b.WriteByte(' ')
		b.WriteString(string(t))
	}
	return b.String()
}

// take returns the summary prepared for a digest of targets, if one is.
func (w *writing) take(sid string, targets []model.ItemID) (preparedSummary, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := preparedKey(sid, targets)
	p, ok := w.prepared[k]
	delete(w.prepared, k)
	return p, ok
}

// transcriptOf is what a model is asked to summarize for a's targets, as
// snap shows them.
func transcriptOf(s *ops.Service, snap ops.Snapshot, a Action) (string, error) {
	indices := make([]int, 0, a.Last-a.First+1)
	for i := a.First; i <= a.Last; i++ {
		indices = append(indices, i)
	}
	var items []formats.Item
	err := s.Store().View(func(tx store.Tx) error {
		var err error
		items, _, err = ops.TextItems(tx, snap.View, indices)
		return err
	})
	if err != nil {
		return "", err
	}
	text, _ := summary.Transcript(items, indices)
	return text, nil
}

// about says what a summary covers, for the model's instructions.
func about(snap ops.Snapshot, a Action) string {
	return fmt.Sprintf("%s of %q, items %d–%d, kept by weft's memory policy", covers(a), snap.Info.Title, a.First, a.Last)
}

func covers(a Action) string {
	switch a.Rule {
	case model.RuleArchive:
		return "the oldest summaries and turns"
	case model.RuleBudget:
		return fmt.Sprintf("%d older turns", a.Turns)
	case model.RuleRounds:
		return "the earlier tool rounds of the latest turn (the agent is still at work on it)"
	}
	return fmt.Sprintf("%d turns", a.Turns)
}

// ask has w write a summary of a's targets as snap shows them, in the
// background, and gives it to done.
func (wr *writing) ask(ctx context.Context, s *ops.Service, w *writer, snap ops.Snapshot, a Action, done func(preparedSummary)) {
	key := preparedKey(snap.Info.ID, a.Targets)
	wr.mu.Lock()
	if wr.asked[key] {
		wr.mu.Unlock()
		return
	}
	wr.asked[key] = true
	wr.mu.Unlock()
	transcript, err := transcriptOf(s, snap, a)
	if err != nil {
		s.Logger().Warn("memory: reading what to summarize failed", "session", snap.Info.ID, "err", err)
		return
	}
	maxTokens := summaryEstimate(a.Turns)
	instructions := summary.Instructions(about(snap, a), maxTokens)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), summaryWait)
	wr.jobs.Add(1)
	go func() {
		defer wr.jobs.Done()
		defer cancel()
		defer func() {
			wr.mu.Lock()
			delete(wr.asked, key)
			wr.mu.Unlock()
		}()
		text, byModel, err := w.write(ctx, instructions, transcript, maxTokens)
		text = strings.TrimSpace(text)
		if err == nil && text == "" {
			err = fmt.Errorf("the model answered with an empty summary")
		}
		if err != nil {
			s.Logger().Warn("memory: a model's summary failed; the extractive one stands", "session", snap.Info.ID, "summarizer", w.source, "err", err)
			return
		}
		done(preparedSummary{text: text, source: w.source, model: byModel})
	}()
}

// prepare asks for the summaries of the digests the policy will make
// next, from a lower watermark (two turns, or a tenth of the budget,
// before the thresholds), so that the digest finds its summary written.
func prepare(ctx context.Context, s *ops.Service, w *writer, snap ops.Snapshot, its []Item) {
	p := *snap.Info.Memory
	lower := p
	lower.MaxActiveTurns = max(1, p.MaxActiveTurns-2)
	if p.BudgetTokens > 0 {
		lower.BudgetTokens = p.BudgetTokens * 9 / 10
		lower.TargetTokens = min(p.Target(), lower.BudgetTokens-1)
	}
	wr := writingOf(s)
	for _, a := range Plan(its, lower, snap.Ops) {
		if a.Type != model.OpDigest {
			continue
		}
		key := preparedKey(snap.Info.ID, a.Targets)
		wr.mu.Lock()
		_, ready := wr.prepared[key]
		wr.mu.Unlock()
		if ready {
			continue
		}
		wr.ask(ctx, s, w, snap, a, func(ps preparedSummary) {
			wr.mu.Lock()
			defer wr.mu.Unlock()
			if len(wr.prepared) >= maxPrepared {
				clear(wr.prepared)
			}
			wr.prepared[key] = ps
		})
	}
}

// replace has w write the summary of a digest made with the extractive
// one (as snap showed its targets before it), and puts it in the
// summary's place: a revise of that summary, by memory.
func replace(ctx context.Context, s *ops.Service, w *writer, snap ops.Snapshot, a Action, made Made) {
	writingOf(s).ask(ctx, s, w, snap, a, func(ps preparedSummary) {
		ctx := ops.WithRule(ops.WithAuthor(context.WithoutCancel(ctx), model.MemoryAuthor), ops.Rule{Name: a.Rule, Turns: a.Turns, Source: ps.source, Model: ps.model})
		_, err := s.ReviseMessages(ctx, ops.ReviseArgs{
			Selection:    ops.Selection{SessionID: snap.Info.ID, IDs: []model.ItemID{model.SyntheticID(made.OperationID, 0)}},
			Replacements: []model.NewMessage{{Role: model.RoleSystem, Content: ps.text, Tokens: tokens.Count(ps.text)}},
		})
		if err != nil {
			// The operator (or an agent) changed it since: theirs stands.
			s.Logger().Log(ctx, slog.LevelInfo, "memory: a model's summary came after the digest changed; left out", "session", snap.Info.ID, "err", err)
		}
	})
}
