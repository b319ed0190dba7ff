package ops

import (
	"context"
	"encoding/json"
	"time"

	"weft/model"
	"weft/ops/thread"
	"weft/ops/timeparse"
	"weft/store"
)

// MessageOut is a message as every result shows it.
type MessageOut struct {
	Index     int             `json:"index"`
	ID        model.ItemID    `json:"id"`
	Role      model.Role      `json:"role"`
	Content   string          `json:"content"`
	Name      string          `json:"name,omitempty"`
	Parts     json.RawMessage `json:"parts,omitempty"`
	CreatedAt string          `json:"created_at"`
	Tokens    int             `json:"tokens"`
	Tags      []string        `json:"tags"`
	Synthetic bool            `json:"synthetic"`
	OpID      string          `json:"op_id,omitempty"`
	// TimeSpanStart and TimeSpanEnd are, for a synthetic item, the time
	// span of what it stands for (CreatedAt lies inside it).
	TimeSpanStart string `json:"time_span_start,omitempty"`
	TimeSpanEnd   string `json:"time_span_end,omitempty"`
	// Hidden says, where a result lists stored messages whatever the
	// operations do (get_turns_since without summaries), whether the
	// effective thread hides this one; Index is then where it is hidden.
	Hidden *bool `json:"hidden,omitempty"`
}

// SummaryOut is a summary (an active digest's item) as results show it.
type SummaryOut struct {
	Index         int          `json:"index"`
	ID            model.ItemID `json:"id"`
	OpID          string       `json:"op_id"`
	Content       string       `json:"content"`
	TimeSpanStart string       `json:"time_span_start"`
	TimeSpanEnd   string       `json:"time_span_end"`
	MessageCount  int          `json:"message_count"`
	CreatedAt     string       `json:"created_at"`
	Tokens        int          `json:"tokens"`
}

// storeIndex is the store's bytime index as a thread.TimeIndex.
type storeIndex struct {
	tx  *store.Tx
	sid string
}

func (x storeIndex) TimeAscend(from time.Time, fn func(uint64, int64) bool) error {
	return x.tx.TimeAscend(x.sid, from, fn)
}

// messagesOut renders view items, reading the stored bodies it needs in
// the transaction given.
func messagesOut(tx *store.Tx, v *model.View, indices []int) ([]MessageOut, error) {
	out := make([]MessageOut, len(indices))
	for k, i := range indices {
		it := v.Items[i]
		tags := v.Tags(it)
		if tags == nil {
			tags = []string{}
		}
		if it.Seq > 0 {
			m, err := tx.Message(v.SessionID, it.Seq)
			if err != nil {
				return nil, err
			}
			out[k] = storedOut(i, &m, tags)
			continue
		}
		s := &v.Synth[it.Synth]
		out[k] = MessageOut{
			Index: i, ID: s.ID(), Role: s.Role, Content: s.Content, Name: s.Name, Parts: s.Parts,
			CreatedAt: formatTime(s.CreatedAt), Tokens: s.Tokens, Tags: tags,
			Synthetic: true, OpID: s.OpID,
			TimeSpanStart: formatTime(s.TimeSpanStart), TimeSpanEnd: formatTime(s.TimeSpanEnd),
		}
	}
	return out, nil
}

// storedMessagesOut renders stored messages whatever the operations do
// to them, each saying whether the effective thread hides it (and where:
// Index is the place of the item or marker that hides it).
func storedMessagesOut(tx *store.Tx, v *model.View, seqs []uint64) ([]MessageOut, error) {
	out := make([]MessageOut, 0, len(seqs))
	for _, seq := range seqs {
		m, err := tx.Message(v.SessionID, seq)
		if err != nil {
			return nil, err
		}
		idx, visible := v.PlaceOfSeq(seq)
		tags := []string{}
		if visible && v.Tags(v.Items[idx]) != nil {
			tags = v.Tags(v.Items[idx])
		}
		o := storedOut(idx, &m, tags)
		hidden := !visible
		o.Hidden = &hidden
		out = append(out, o)
	}
	return out, nil
}

func storedOut(index int, m *model.Message, tags []string) MessageOut {
	return MessageOut{
		Index: index, ID: m.ID, Role: m.Role, Content: m.Content, Name: m.Name, Parts: m.Parts,
		CreatedAt: formatTime(m.CreatedAt), Tokens: m.Tokens, Tags: tags,
	}
}

func summariesOut(v *model.View, indices []int) []SummaryOut {
	out := make([]SummaryOut, len(indices))
	for k, i := range indices {
		s := &v.Synth[v.Items[i].Synth]
		out[k] = SummaryOut{
			Index: i, ID: s.ID(), OpID: s.OpID, Content: s.Content,
			TimeSpanStart: formatTime(s.TimeSpanStart), TimeSpanEnd: formatTime(s.TimeSpanEnd),
			MessageCount: s.MessageCount, CreatedAt: formatTime(s.CreatedAt), Tokens: s.Tokens,
		}
	}
	return out
}

// parseTime reads a timestamp argument, with an error that shows the
// accepted forms.
func (s *Service) parseTime(field, value string) (time.Time, error) {
	t, err := timeparse.Parse(value, s.now(), time.Local)
	if err != nil {
		return time.Time{}, invalidf("%s: %v", field, err)
	}
	return t, nil
}

// ConversationContextArgs are get_conversation_context's arguments.
type ConversationContextArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Turns     *int   `json:"turns" jsonschema:"how many turns of context: recent raw turns first, then summaries for the rest"`
}

// ConversationContextResult is get_conversation_context's result (seed 000).
type ConversationContextResult struct {
	UnsummarizedCount  int          `json:"unsummarized_count"`
	SummariesCount     int          `json:"summaries_count"`
	RawTurnsCount      int          `json:"raw_turns_count"`
	TurnsCoveredApprox int          `json:"turns_covered_approx"`
	Summaries          []SummaryOut `json:"summaries"`
	RawTurns           []MessageOut `json:"raw_turns"`
}

// GetConversationContext blends summaries and raw turns to cover a number
// of turns.
func (s *Service) GetConversationContext(_ context.Context, a ConversationContextArgs) (ConversationContextResult, error) {
	if a.Turns == nil {
		return ConversationContextResult{}, invalidf("turns is missing: how many turns of context do you want?")
	}
	if *a.Turns < 0 {
		return ConversationContextResult{}, invalidf("turns %d is negative; ask for 0 or more", *a.Turns)
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return ConversationContextResult{}, err
	}
	p := thread.PlanContext(snap.view, *a.Turns)
	res := ConversationContextResult{
		UnsummarizedCount: p.UnsummarizedCount, SummariesCount: len(p.Summaries),
		RawTurnsCount: len(p.RawTurns), TurnsCoveredApprox: p.TurnsCovered,
		Summaries: summariesOut(snap.view, p.Summaries),
	}
	err = s.st.View(func(tx *store.Tx) error {
		res.RawTurns, err = messagesOut(tx, snap.view, p.RawTurns)
		return err
	})
	return res, err
}

// TurnsSinceArgs are get_turns_since's arguments.
type TurnsSinceArgs struct {
	SessionID        string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Timestamp        string `json:"timestamp" jsonschema:"ISO 8601 (2026-01-26T07:30:00, zone optional: local if omitted), a bare date or time, or relative (-2h, 2h ago, yesterday 15:00)"`
	IncludeSummaries *bool  `json:"include_summaries,omitempty" jsonschema:"also return summaries whose time span ends at or after the timestamp (default true)"`
	Limit            *int   `json:"limit,omitempty" jsonschema:"at most this many messages, oldest first (default 1000)"`
}

// TurnsSinceResult is get_turns_since's result (seed 000).
type TurnsSinceResult struct {
	TimestampStart string       `json:"timestamp_start"`
	MessagesCount  int          `json:"messages_count"`
	SummariesCount int          `json:"summaries_count"`
	Messages       []MessageOut `json:"messages"`
	Summaries      []SummaryOut `json:"summaries"`
	// Truncated says limit cut the messages; More is how many were left
	// out (ask again from the last one's created_at, or with a larger
	// limit).
	Truncated bool `json:"truncated"`
	More      int  `json:"more,omitempty"`
}

// GetTurnsSince returns the turns created at or after a moment.
func (s *Service) GetTurnsSince(_ context.Context, a TurnsSinceArgs) (TurnsSinceResult, error) {
	t, err := s.parseTime("timestamp", a.Timestamp)
	if err != nil {
		return TurnsSinceResult{}, err
	}
	limit := 1000
	if a.Limit != nil {
		if *a.Limit < 0 {
			return TurnsSinceResult{}, invalidf("limit %d is negative; ask for 0 or more messages (default 1000)", *a.Limit)
		}
		limit = *a.Limit
	}
	include := a.IncludeSummaries == nil || *a.IncludeSummaries
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return TurnsSinceResult{}, err
	}
	res := TurnsSinceResult{TimestampStart: formatTime(t)}
	err = s.st.View(func(tx *store.Tx) error {
		p, err := thread.PlanSince(snap.view, storeIndex{tx, snap.info.ID}, t, include, limit)
		if err != nil {
			return err
		}
		res.Summaries = summariesOut(snap.view, p.Summaries)
		res.Truncated, res.More = p.Truncated, p.More
		if include {
			res.Messages, err = messagesOut(tx, snap.view, p.Messages)
			return err
		}
		res.Messages, err = storedMessagesOut(tx, snap.view, p.Stored)
		return err
	})
	res.MessagesCount, res.SummariesCount = len(res.Messages), len(res.Summaries)
	return res, err
}

// TurnsAroundArgs are get_turns_around's arguments.
type TurnsAroundArgs struct {
	SessionID   string   `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Timestamp   string   `json:"timestamp" jsonschema:"the centre: ISO 8601 (zone optional: local if omitted), a bare date or time, or relative (-2h, yesterday 15:00)"`
	Count       *int     `json:"count,omitempty" jsonschema:"how many items in all (default 40)"`
	BeforeRatio *float64 `json:"before_ratio,omitempty" jsonschema:"share of the items before the centre, 0..1 (default 0.5; clamped)"`
}

// TurnsAroundResult is get_turns_around's result (seed 000).
type TurnsAroundResult struct {
	CenterTimestamp string       `json:"center_timestamp"`
	BeforeCount     int          `json:"before_count"`
	AfterCount      int          `json:"after_count"`
	TotalCount      int          `json:"total_count"`
	Messages        []MessageOut `json:"messages"`
}

// GetTurnsAround returns the effective thread around a moment.
func (s *Service) GetTurnsAround(_ context.Context, a TurnsAroundArgs) (TurnsAroundResult, error) {
	t, err := s.parseTime("timestamp", a.Timestamp)
	if err != nil {
		return TurnsAroundResult{}, err
	}
	count, ratio := 40, 0.5
	if a.Count != nil {
		if *a.Count < 0 {
			return TurnsAroundResult{}, invalidf("count %d is negative; ask for 0 or more items (default 40)", *a.Count)
		}
		if *a.Count > maxRange {
			return TurnsAroundResult{}, invalidf("count %d is more than %d items in one call; ask for %d at most and page on with get_message_range", *a.Count, maxRange, maxRange)
		}
		count = *a.Count
	}
	if a.BeforeRatio != nil {
		ratio = *a.BeforeRatio
		if ratio != ratio { // NaN
			return TurnsAroundResult{}, invalidf("before_ratio is not a number; use 0..1 (default 0.5)")
		}
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return TurnsAroundResult{}, err
	}
	res := TurnsAroundResult{CenterTimestamp: formatTime(t)}
	err = s.st.View(func(tx *store.Tx) error {
		p, err := thread.PlanAround(snap.view, storeIndex{tx, snap.info.ID}, t, count, ratio)
		if err != nil {
			return err
		}
		res.BeforeCount, res.AfterCount, res.TotalCount = p.Before, p.After, p.End-p.Start
		res.Messages, err = messagesOut(tx, snap.view, span(p.Start, p.End))
		return err
	})
	return res, err
}

// span returns the indices start..end-1.
func span(start, end int) []int {
	out := make([]int, 0, max(end-start, 0))
	for i := start; i < end; i++ {
		out = append(out, i)
	}
	return out
}

// MessageRangeArgs are get_message_range's arguments.
type MessageRangeArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	StartIdx  *int   `json:"start_idx" jsonschema:"first index, 0-based"`
	EndIdx    *int   `json:"end_idx" jsonschema:"last index (inclusive)"`
	View      string `json:"view,omitempty" jsonschema:"effective (default: the thread with operations applied) or raw (the stored messages)"`
}

// MessageRangeResult is get_message_range's result.
type MessageRangeResult struct {
	SessionID string       `json:"session_id"`
	Version   uint64       `json:"version"`
	Total     int          `json:"total"`
	Messages  []MessageOut `json:"messages"`
}

// maxRange bounds one get_message_range call.
const maxRange = 2000

// GetMessageRange returns an inclusive range of the effective thread, or
// of the stored messages with view=raw.
func (s *Service) GetMessageRange(_ context.Context, a MessageRangeArgs) (MessageRangeResult, error) {
	raw, err := viewArg(a.View)
	if err != nil {
		return MessageRangeResult{}, err
	}
	if a.StartIdx == nil || a.EndIdx == nil {
		return MessageRangeResult{}, invalidf("give start_idx and end_idx (inclusive, 0-based)")
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return MessageRangeResult{}, err
	}
	v := snap.view
	total := v.Len()
	if raw {
		total = snap.info.MessageCount
	}
	start, end := *a.StartIdx, *a.EndIdx
	if err := checkRange(start, end, total); err != nil {
		return MessageRangeResult{}, err
	}
	if end-start+1 > maxRange {
		return MessageRangeResult{}, invalidf("%d items is more than %d in one call: ask for %d..%d, then continue from %d", end-start+1, maxRange, start, start+maxRange-1, start+maxRange)
	}
	res := MessageRangeResult{SessionID: snap.info.ID, Version: snap.info.Version, Total: total}
	err = s.st.View(func(tx *store.Tx) error {
		if !raw {
			res.Messages, err = messagesOut(tx, v, span(start, end+1))
			return err
		}
		res.Messages = make([]MessageOut, 0, end-start+1)
		return tx.Messages(snap.info.ID, uint64(start+1), uint64(end+1), func(m model.Message) error {
			var tags []string
			if i := v.IndexOfSeq(m.Seq); i >= 0 {
				tags = v.Tags(v.Items[i])
			}
			if tags == nil {
				tags = []string{}
			}
			res.Messages = append(res.Messages, storedOut(int(m.Seq-1), &m, tags))
			return nil
		})
	})
	return res, err
}

func viewArg(v string) (raw bool, err error) {
	v, err = choiceArg("view", v, views)
	return v == ViewRaw, err
}

// StartupContextArgs are get_startup_context's arguments.
type StartupContextArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Summaries *int   `json:"summaries,omitempty" jsonschema:"how many of the latest summaries (default 2)"`
}

// StartupContextResult is get_startup_context's result (seed 003).
type StartupContextResult struct {
	Summaries         []SummaryOut `json:"summaries"`
	Unsummarized      []MessageOut `json:"unsummarized"`
	UnsummarizedCount int          `json:"unsummarized_count"`
}

// GetStartupContext returns the startup package: the latest summaries and
// ALL unsummarized turns, by recency, with no search and no cap.
func (s *Service) GetStartupContext(_ context.Context, a StartupContextArgs) (StartupContextResult, error) {
	n := 2
	if a.Summaries != nil {
		if *a.Summaries < 0 {
			return StartupContextResult{}, invalidf("summaries %d is negative; ask for 0 or more (default 2)", *a.Summaries)
		}
		n = *a.Summaries
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return StartupContextResult{}, err
	}
	p := thread.PlanStartup(snap.view, n)
	res := StartupContextResult{Summaries: summariesOut(snap.view, p.Summaries), UnsummarizedCount: len(p.Unsummarized)}
	err = s.st.View(func(tx *store.Tx) error {
		res.Unsummarized, err = messagesOut(tx, snap.view, p.Unsummarized)
		return err
	})
	return res, err
}
