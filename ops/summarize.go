package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"weft/internal/english"
	"weft/internal/tokens"
	"weft/ops/progress"
	"weft/ops/summary"

	"weft/formats"
	"weft/model"
	"weft/store"
)

// summarize_message_range (seed 001): a summary of a range of the
// effective thread, from the first source that is there — the calling
// client's model through MCP sampling, an OpenAI-compatible endpoint the
// operator configured, or a local extractive summary — returned, and
// with store=true recorded as a digest over the range.

// Summary sources, as results name them.
const (
	SourceSampling   = summary.SourceSampling
	SourceEndpoint   = summary.SourceEndpoint
	SourceExtractive = summary.SourceExtractive
)

// ErrSummarySource marks a failure of a model asked for a summary (the
// client's or the endpoint's), as opposed to a bad request.
var ErrSummarySource = summary.ErrSource

const (
	sumDefaultTokens = 300
	sumMinTokens     = 16
	sumMaxTokens     = 4000
)

// WithSummaryEndpoint sets the OpenAI-compatible endpoint
// summarize_message_range may ask (the CLI fills it from WEFT_SUMMARY_*).
func WithSummaryEndpoint(e summary.Endpoint) Option {
	return func(s *Service) { s.endpoint = e }
}

// SummarizeArgs are summarize_message_range's arguments.
type SummarizeArgs struct {
	Selection
	Store     bool   `json:"store,omitempty" jsonschema:"record the summary as a digest over the range (a reversible operation); default false: only return it"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"how long the summary may be, in tokens (default 300, 16..4000)"`
	Source    string `json:"source,omitempty" jsonschema:"auto (default: the client's model if it can sample, else the configured endpoint, else extractive), sampling, endpoint or extractive"`
	EditOptions
}

// SummarizeResult is summarize_message_range's result.
type SummarizeResult struct {
	SessionID string `json:"session_id"`
	// Version is the session's version: after the digest with store=true.
	Version uint64 `json:"version"`
	// Source is "sampling", "endpoint" or "extractive"; Model the model
	// that wrote the summary, when known.
	Source  string `json:"source"`
	Model   string `json:"model,omitempty"`
	Summary string `json:"summary"`
	Tokens  int    `json:"tokens"`
	// What the summary covers.
	StartIdx      int    `json:"start_idx"`
	EndIdx        int    `json:"end_idx"`
	MessageCount  int    `json:"message_count"`
	InputTokens   int    `json:"input_tokens"`
	TimeSpanStart string `json:"time_span_start"`
	TimeSpanEnd   string `json:"time_span_end"`
	// PromptShortened counts the messages shortened or left out of the
	// prompt a model was given (long ranges).
	PromptShortened int `json:"prompt_shortened,omitempty"`
	// Stored and OperationID: the digest made with store=true.
	Stored      bool   `json:"stored"`
	OperationID string `json:"operation_id,omitempty"`
}

// SummarizeMessageRange summarizes a range of the effective thread. It
// reads nothing but the range and writes nothing unless store is set;
// then the digest is made over the same items (by ID), so edits made
// while a model was writing do not shift it.
func (s *Service) SummarizeMessageRange(ctx context.Context, a SummarizeArgs) (SummarizeResult, error) {
	maxTokens := sumDefaultTokens
	if a.MaxTokens != nil {
		maxTokens = *a.MaxTokens
		if maxTokens < sumMinTokens || maxTokens > sumMaxTokens {
			return SummarizeResult{}, Invalidf("max_tokens %d is outside %d..%d (default %d)", maxTokens, sumMinTokens, sumMaxTokens, sumDefaultTokens)
		}
	}
	source, err := s.sumSource(ctx, a.Source)
	if err != nil {
		return SummarizeResult{}, err
	}
	if _, err := validTags("when_tags", a.WhenTags, true); err != nil {
		return SummarizeResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return SummarizeResult{}, err
	}
	// As for every edit: with a range (or a tag:NAME among the ids), any
	// change since expected_version refuses it; with ids, only a change
	// to those items.
	if len(a.IDs) > 0 && a.StartIdx == nil && a.EndIdx == nil && !selectsByTag(a.IDs) {
		err = checkNamed(&snap.Info, snap.Ops, snap.View, a.ExpectedVersion, a.IDs)
	} else {
		err = checkVersion(&snap.Info, a.ExpectedVersion)
	}
	if err != nil {
		return SummarizeResult{}, err
	}
	v := snap.View
	r, err := a.Selection.resolve(v)
	if err != nil {
		return SummarizeResult{}, err
	}
	indices := make([]int, len(r.targets))
	for k, id := range r.targets {
		indices[k] = v.IndexOf(id)
	}
	// A long range reports two halves: reading the messages, then
	// summarizing them (locally, or by the model asked).
	pm := progress.New(ctx, 2*len(indices), fmt.Sprintf("read %d messages", len(indices)))
	var items []formats.Item
	err = s.st.View(func(tx store.Tx) error {
		items, _, err = TextItems(tx, v, indices)
		return err
	})
	if err != nil {
		return SummarizeResult{}, err
	}
	pm.Add(len(indices))
	pm.Stage(fmt.Sprintf("summarized %d messages (%s)", len(indices), source))
	res := SummarizeResult{
		SessionID: snap.Info.ID, Version: snap.Info.Version, Source: source,
		StartIdx: r.first, EndIdx: r.end, MessageCount: len(items),
	}
	first, last := sumSpan(v, indices, items)
	res.TimeSpanStart, res.TimeSpanEnd = FormatTime(first), FormatTime(last)
	for _, it := range items {
		res.InputTokens += it.Tokens
	}
	about := sumAbout(snap.Info.Title, r, len(items), first, last)

	switch source {
	case SourceExtractive:
		res.Summary = summary.Extract(items, about, maxTokens)
	default:
		transcript, cut := summary.Transcript(items, indices)
		res.PromptShortened = cut
		instructions := summary.Instructions(about, maxTokens)
		if source == SourceSampling {
			res.Summary, res.Model, err = summary.SamplerFrom(ctx)(ctx, instructions+"\n\n"+transcript, maxTokens)
			if err != nil {
				err = fmt.Errorf("%w: sampling: %w (source=extractive makes one locally)", ErrSummarySource, err)
			}
		} else {
			res.Summary, res.Model, err = s.endpoint.Ask(ctx, instructions, transcript, maxTokens)
			if se := (*summary.SettingError)(nil); errors.As(err, &se) {
				err = Invalidf("%s", se.Msg)
			}
		}
		if err != nil {
			return SummarizeResult{}, err
		}
		res.Summary = strings.TrimSpace(res.Summary)
		if res.Summary == "" {
			return SummarizeResult{}, fmt.Errorf("%w: the %s model answered with an empty summary", ErrSummarySource, source)
		}
	}
	res.Tokens = tokens.Count(res.Summary)
	pm.Add(len(indices))
	if !a.Store {
		return res, nil
	}
	op, err := s.digest(ctx, DigestArgs{
		Selection:   Selection{SessionID: snap.Info.ID, IDs: r.targets},
		Summary:     res.Summary,
		EditOptions: a.EditOptions,
	}, source, res.Model)
	if err != nil {
		return SummarizeResult{}, fmt.Errorf("the summary was written but could not be stored: %w", err)
	}
	res.Stored, res.OperationID, res.Version = true, op.OperationID, op.Version
	return res, nil
}

// sumSource picks the summary source: the one asked for, if it is
// there, or with auto the first that is.
func (s *Service) sumSource(ctx context.Context, asked string) (string, error) {
	canSample := summary.SamplerFrom(ctx) != nil
	hasEndpoint := s.endpoint.Configured()
	asked, err := ChoiceArg("source", asked, summarySources)
	if err != nil {
		return "", err
	}
	switch asked {
	case SourceAuto:
		switch {
		case canSample:
			return SourceSampling, nil
		case hasEndpoint:
			return SourceEndpoint, nil
		}
		return SourceExtractive, nil
	case SourceSampling:
		if !canSample {
			return "", Invalidf("source sampling: this caller cannot lend its model (only an MCP client that supports sampling can); use source endpoint or extractive")
		}
		return SourceSampling, nil
	case SourceEndpoint:
		if !hasEndpoint {
			return "", Invalidf("source endpoint: %s is not set; set it to an OpenAI-compatible chat-completions URL (with %s and %s as needed), or use source extractive", summary.SettingURL, summary.SettingModel, summary.SettingKey)
		}
		return SourceEndpoint, nil
	case SourceExtractive:
		return SourceExtractive, nil
	}
	return "", Invalidf("source %q is not %s", asked, OrList(summarySources))
}

// sumSpan is the time span of the items: the times of the stored
// messages and the spans synthetic items stand for.
func sumSpan(v *model.View, indices []int, items []formats.Item) (first, last time.Time) {
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	for k, i := range indices {
		it := v.Items[i]
		if it.Seq > 0 {
			see(items[k].CreatedAt)
			continue
		}
		sy := &v.Synth[it.Synth]
		see(sy.TimeSpanStart)
		see(sy.TimeSpanEnd)
	}
	return first, last
}

// sumAbout says what a summary covers: the range, the session, the
// count and the time span.
func sumAbout(title string, r resolved, n int, first, last time.Time) string {
	var b strings.Builder
	if r.contiguous {
		if r.first == r.end {
			fmt.Fprintf(&b, "Message %d", r.first)
		} else {
			fmt.Fprintf(&b, "Messages %d–%d", r.first, r.end)
		}
	} else {
		fmt.Fprintf(&b, "%s between %d and %d", english.Count(n, "message"), r.first, r.end)
	}
	if title != "" {
		fmt.Fprintf(&b, " of %q", title)
	}
	if !first.IsZero() {
		b.WriteString(", ")
		b.WriteString(formats.SpanText(first, last))
	}
	return b.String()
}
