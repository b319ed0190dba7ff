package reads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"weft/ops"

	"weft/internal/english"
	"weft/model"
	"weft/ops/thread"
	"weft/ops/timeparse"
	"weft/store"
)

// MessageOut is a message as every result shows it. Its text appears
// once: the content carries it, and Parts only the structure (and what
// the content does not show, such as thinking).
type MessageOut struct {
	Index     int          `json:"index"`
	ID        model.ItemID `json:"id"`
	Role      model.Role   `json:"role"`
	Content   string       `json:"content"`
	Name      string       `json:"name,omitempty"`
	Parts     []PartOut    `json:"parts,omitempty"`
	CreatedAt string       `json:"created_at"`
	Tokens    int          `json:"tokens"`
	Tags      []string     `json:"tags"`
	Synthetic bool         `json:"synthetic"`
	OpID      string       `json:"op_id,omitempty"`
	// TimeSpanStart and TimeSpanEnd are, for a synthetic item, the time
	// span of what it stands for (CreatedAt lies inside it).
	TimeSpanStart string `json:"time_span_start,omitempty"`
	TimeSpanEnd   string `json:"time_span_end,omitempty"`
	// Hidden says, where a result lists stored messages whatever the
	// operations do (get_turns_since without summaries), whether the
	// effective thread hides this one; Index is then where it is hidden.
	Hidden *bool `json:"hidden,omitempty"`
	// ContentOffset is the character the content starts at, when it is
	// the rest of a cut body (get_message_range content_offset).
	ContentOffset int `json:"content_offset,omitempty"`
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
	tx  store.Tx
	sid string
}

func (x storeIndex) TimeAscend(from time.Time, fn func(uint64, int64) bool) error {
	return x.tx.TimeAscend(x.sid, from, fn)
}

// packStored gives stored messages (by seq) whatever the operations do
// to them, as the packer lets, each saying whether the effective thread
// hides it (and where: Index is the place of the item or marker that
// hides it).
func packStored(tx store.Tx, v *model.View, seqs []uint64, p *packer) ([]MessageOut, error) {
	out := make([]MessageOut, 0, min(len(seqs), 256))
	for k, seq := range seqs {
		if p.full {
			p.skip(len(seqs) - k)
			break
		}
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
		if packOne(p, &o, m.Tokens, bodyAt{index: int(seq - 1), raw: true}, 0) {
			out = append(out, o)
		}
	}
	return out, nil
}

func storedOut(index int, m *model.Message, tags []string) MessageOut {
	return MessageOut{
		Index: index, ID: m.ID, Role: m.Role, Content: m.Content, Name: m.Name, Parts: partsOut(m.Content, m.Parts),
		CreatedAt: ops.FormatTime(m.CreatedAt), Tokens: m.Tokens, Tags: tags,
	}
}

func summariesOut(v *model.View, indices []int) []SummaryOut {
	out := make([]SummaryOut, len(indices))
	for k, i := range indices {
		s := &v.Synth[v.Items[i].Synth]
		out[k] = SummaryOut{
			Index: i, ID: s.ID(), OpID: s.OpID, Content: s.Content,
			TimeSpanStart: ops.FormatTime(s.TimeSpanStart), TimeSpanEnd: ops.FormatTime(s.TimeSpanEnd),
			MessageCount: s.MessageCount, CreatedAt: ops.FormatTime(s.CreatedAt), Tokens: s.Tokens,
		}
	}
	return out
}

// byIndex sorts a result's messages back into thread order after they
// were packed in the order that matters most.
func byIndex(ms []MessageOut) {
	slices.SortStableFunc(ms, func(a, b MessageOut) int { return a.Index - b.Index })
}

func summariesByIndex(ss []SummaryOut) {
	slices.SortStableFunc(ss, func(a, b SummaryOut) int { return a.Index - b.Index })
}

// reversed returns the indices newest first.
func reversed(xs []int) []int {
	out := slices.Clone(xs)
	slices.Reverse(out)
	return out
}

// itemOrder is a paged read's order of view items: its summaries first,
// then its messages, each in the order they are given (what matters
// most first). A cursor's place is a position in it.
type itemOrder struct {
	v         *model.View
	summaries []int
	messages  []int
}

func (o itemOrder) len() int { return len(o.summaries) + len(o.messages) }

func (o itemOrder) id(k int) string {
	if k < len(o.summaries) {
		return string(o.v.ID(o.v.Items[o.summaries[k]]))
	}
	return string(o.v.ID(o.v.Items[o.messages[k-len(o.summaries)]]))
}

// from is the order past its first k items.
func (o itemOrder) from(k int) itemOrder {
	s := min(k, len(o.summaries))
	m := min(k-s, len(o.messages))
	return itemOrder{v: o.v, summaries: o.summaries[s:], messages: o.messages[m:]}
}

// pack gives the order's summaries and messages as the packer lets.
func (o itemOrder) pack(tx store.Tx, heads []model.Head, p *packer) ([]SummaryOut, []MessageOut, error) {
	sums := packSummaries(o.v, o.summaries, p)
	msgs, err := packMessages(tx, o.v, heads, o.messages, p)
	summariesByIndex(sums)
	byIndex(msgs)
	return sums, msgs, err
}

// plan estimates the order's items for a packer.
func (o itemOrder) plan(heads []model.Head) (bodies, metas []int) {
	return planItems(o.v, heads, append(slices.Clone(o.summaries), o.messages...))
}

// readPage runs a paged read of an order: it resumes after the
// cursor's last item, packs what fits beside the result's frame
// (envelope, counted with its lists empty) and returns what was given,
// the packer, and the cursor to continue (nil when everything was
// given).
func readPage(tx store.Tx, place readPlace, order itemOrder, heads []model.Head, cur *readCursor, maxTokens int, envelope any) ([]SummaryOut, []MessageOut, *packer, *readCursor, error) {
	start, err := cur.resume(place, order.len(), order.id)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	rest := order.from(start)
	bodies, metas := rest.plan(heads)
	p := newPacker(maxTokens, countJSON(envelope), bodies, metas)
	sums, msgs, err := rest.pack(tx, heads, p)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var next *readCursor
	if given := start + p.taken; p.omitted > 0 && given > 0 {
		next = place.cursor(order.id(given - 1))
	}
	return sums, msgs, p, next, nil
}

// parseTime reads a timestamp argument, with an error that shows the
// accepted forms.
func parseTime(s *ops.Service, field, value string) (time.Time, error) {
	t, err := timeparse.Parse(value, s.Clock(), time.Local)
	if err != nil {
		return time.Time{}, ops.Invalidf("%s: %v", field, err)
	}
	return t, nil
}

// ConversationContextArgs are get_conversation_context's arguments.
type ConversationContextArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Turns     *int   `json:"turns" jsonschema:"how many turns of context: recent raw turns first, then summaries for the rest"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the summaries and the latest turns first, long bodies cut with a marker saying how to read on; older turns that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the older turns it left out"`
}

// ConversationContextResult is get_conversation_context's result (seed
// 000). The counts are the context's; the lists give what fits the
// budget (Omitted counts the rest).
type ConversationContextResult struct {
	UnsummarizedCount  int          `json:"unsummarized_count"`
	SummariesCount     int          `json:"summaries_count"`
	RawTurnsCount      int          `json:"raw_turns_count"`
	TurnsCoveredApprox int          `json:"turns_covered_approx"`
	Summaries          []SummaryOut `json:"summaries"`
	RawTurns           []MessageOut `json:"raw_turns"`
	Fit
}

// getConversationContext blends summaries and raw turns to cover a number
// of turns, within a budget: the summaries and the latest turns first.
func getConversationContext(s *ops.Service, _ context.Context, a ConversationContextArgs) (ConversationContextResult, error) {
	const tool = "get_conversation_context"
	if a.Turns == nil {
		return ConversationContextResult{}, ops.Invalidf("turns is missing: how many turns of context do you want?")
	}
	if *a.Turns < 0 {
		return ConversationContextResult{}, ops.Invalidf("turns %d is negative; ask for 0 or more", *a.Turns)
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return ConversationContextResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return ConversationContextResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return ConversationContextResult{}, err
	}
	p := thread.PlanContext(snap.View, *a.Turns)
	res := ConversationContextResult{
		UnsummarizedCount: p.UnsummarizedCount, SummariesCount: len(p.Summaries),
		RawTurnsCount: len(p.RawTurns), TurnsCoveredApprox: p.TurnsCovered,
		Summaries: []SummaryOut{}, RawTurns: []MessageOut{},
	}
	order := itemOrder{v: snap.View, summaries: reversed(p.Summaries), messages: reversed(p.RawTurns)}
	place := place(snap, tool, a, false)
	err = s.Store().View(func(tx store.Tx) error {
		sums, msgs, pk, next, err := readPage(tx, place, order, snap.Heads, cur, budget, res)
		if err != nil {
			return err
		}
		res.Summaries, res.RawTurns = sums, msgs
		res.Fit = pk.fit(next, fmt.Sprintf("%d older turns did not fit: call %s again with the same turns and cursor=next_cursor, or read them with get_message_range", pk.omitted, tool))
		return nil
	})
	return res, err
}

// TurnsSinceArgs are get_turns_since's arguments.
type TurnsSinceArgs struct {
	SessionID        string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Timestamp        string `json:"timestamp" jsonschema:"ISO 8601 (2026-01-26T07:30:00, zone optional: local if omitted), a bare date or time, or relative (-2h, 2h ago, yesterday 15:00)"`
	IncludeSummaries *bool  `json:"include_summaries,omitempty" jsonschema:"also return summaries whose time span ends at or after the timestamp (default true)"`
	Limit            *int   `json:"limit,omitempty" jsonschema:"at most this many messages, oldest first (default 1000)"`
	MaxTokens        *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the summaries and the oldest messages first, long bodies cut with a marker saying how to read on; later messages that do not fit are left out, counted, with a next_cursor"`
	Cursor           string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the messages it left out"`
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
	Fit
}

// getTurnsSince returns the turns created at or after a moment.
func getTurnsSince(s *ops.Service, _ context.Context, a TurnsSinceArgs) (TurnsSinceResult, error) {
	const tool = "get_turns_since"
	t, err := parseTime(s, "timestamp", a.Timestamp)
	if err != nil {
		return TurnsSinceResult{}, err
	}
	limit := 1000
	if a.Limit != nil {
		if *a.Limit < 0 {
			return TurnsSinceResult{}, ops.Invalidf("limit %d is negative; ask for 0 or more messages (default 1000)", *a.Limit)
		}
		limit = *a.Limit
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return TurnsSinceResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return TurnsSinceResult{}, err
	}
	include := a.IncludeSummaries == nil || *a.IncludeSummaries
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return TurnsSinceResult{}, err
	}
	v := snap.View
	res := TurnsSinceResult{TimestampStart: ops.FormatTime(t), Messages: []MessageOut{}, Summaries: []SummaryOut{}}
	next := fmt.Sprintf("later messages did not fit: call %s again with the same arguments and cursor=next_cursor", tool)
	place := place(snap, tool, a, false)
	err = s.Store().View(func(tx store.Tx) error {
		p, err := thread.PlanSince(v, storeIndex{tx, snap.Info.ID}, t, include, limit)
		if err != nil {
			return err
		}
		res.Truncated, res.More = p.Truncated, p.More
		if include {
			order := itemOrder{v: v, summaries: p.Summaries, messages: p.Messages}
			sums, msgs, pk, nc, err := readPage(tx, place, order, snap.Heads, cur, budget, res)
			if err != nil {
				return err
			}
			res.Summaries, res.Messages = sums, msgs
			res.Fit = pk.fit(nc, next)
			return nil
		}
		// Without summaries the messages are stored ones, hidden or not:
		// the order is theirs, and a cursor's place is a stored ID.
		id := func(k int) string { return string(model.MessageID(p.Stored[k])) }
		start, err := cur.resume(place, len(p.Stored), id)
		if err != nil {
			return err
		}
		rest := p.Stored[start:]
		bodies, metas := make([]int, len(rest)), make([]int, len(rest))
		for k, seq := range rest {
			if int(seq) <= len(snap.Heads) {
				n := int(snap.Heads[seq-1].Tokens)
				bodies[k], metas[k] = n+n/6, planMeta
			}
		}
		pk := newPacker(budget, countJSON(res), bodies, metas)
		if res.Messages, err = packStored(tx, v, rest, pk); err != nil {
			return err
		}
		var nc *readCursor
		if given := start + pk.taken; pk.omitted > 0 && given > 0 {
			nc = place.cursor(id(given - 1))
		}
		res.Fit = pk.fit(nc, next)
		return nil
	})
	res.MessagesCount, res.SummariesCount = len(res.Messages), len(res.Summaries)
	return res, err
}

// TurnsAroundArgs are get_turns_around's arguments.
type TurnsAroundArgs struct {
	SessionID   string   `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Timestamp   string   `json:"timestamp" jsonschema:"the centre: ISO 8601 (zone optional: local if omitted), a bare date or time, or relative (-2h, yesterday 15:00)"`
	Count       *int     `json:"count,omitempty" jsonschema:"how many items in all (default 40)"`
	BeforeRatio *float64 `json:"before_ratio,omitempty" jsonschema:"share of the items before the centre, 0..1 (default 0.5; clamped)"`
	MaxTokens   *int     `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the items nearest the centre first, long bodies cut with a marker saying how to read on; the farthest that do not fit are left out, counted, with a next_cursor"`
	Cursor      string   `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the items it left out"`
}

// TurnsAroundResult is get_turns_around's result (seed 000): the counts
// are of the items given.
type TurnsAroundResult struct {
	CenterTimestamp string       `json:"center_timestamp"`
	BeforeCount     int          `json:"before_count"`
	AfterCount      int          `json:"after_count"`
	TotalCount      int          `json:"total_count"`
	Messages        []MessageOut `json:"messages"`
	Fit
}

// getTurnsAround returns the effective thread around a moment: within a
// budget, the items nearest it first.
func getTurnsAround(s *ops.Service, _ context.Context, a TurnsAroundArgs) (TurnsAroundResult, error) {
	const tool = "get_turns_around"
	t, err := parseTime(s, "timestamp", a.Timestamp)
	if err != nil {
		return TurnsAroundResult{}, err
	}
	count, ratio := 40, 0.5
	if a.Count != nil {
		if *a.Count < 0 {
			return TurnsAroundResult{}, ops.Invalidf("count %d is negative; ask for 0 or more items (default 40)", *a.Count)
		}
		if *a.Count > maxRange {
			return TurnsAroundResult{}, ops.Invalidf("count %d is more than %d items in one call; ask for %d at most and page on with get_message_range", *a.Count, maxRange, maxRange)
		}
		count = *a.Count
	}
	if a.BeforeRatio != nil {
		ratio = *a.BeforeRatio
		if ratio != ratio { // NaN
			return TurnsAroundResult{}, ops.Invalidf("before_ratio is not a number; use 0..1 (default 0.5)")
		}
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return TurnsAroundResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return TurnsAroundResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return TurnsAroundResult{}, err
	}
	res := TurnsAroundResult{CenterTimestamp: ops.FormatTime(t), Messages: []MessageOut{}}
	// Appended items can widen the window between pages: any write
	// makes a cursor stale.
	place := place(snap, tool, a, true)
	err = s.Store().View(func(tx store.Tx) error {
		p, err := thread.PlanAround(snap.View, storeIndex{tx, snap.Info.ID}, t, count, ratio)
		if err != nil {
			return err
		}
		centre := p.Start + p.Before
		order := itemOrder{v: snap.View, messages: centreOut(p.Start, centre, p.End)}
		_, msgs, pk, next, err := readPage(tx, place, order, snap.Heads, cur, budget, res)
		if err != nil {
			return err
		}
		res.Messages = msgs
		for _, m := range msgs {
			if m.Index < centre {
				res.BeforeCount++
			} else {
				res.AfterCount++
			}
		}
		res.TotalCount = len(msgs)
		res.Fit = pk.fit(next, fmt.Sprintf("%d items farthest from the centre did not fit: call %s again with the same arguments and cursor=next_cursor, or read them with get_message_range", pk.omitted, tool))
		return nil
	})
	return res, err
}

// centreOut orders the indices start..end-1 from the centre out: the
// first item at or after it, the last before it, the next after, ...
func centreOut(start, centre, end int) []int {
	out := make([]int, 0, max(end-start, 0))
	for d := 0; len(out) < end-start; d++ {
		if i := centre + d; i < end {
			out = append(out, i)
		}
		if i := centre - 1 - d; i >= start {
			out = append(out, i)
		}
	}
	return out
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
	SessionID     string   `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	StartIdx      *int     `json:"start_idx,omitempty" jsonschema:"first index, 0-based; with tags it may be left out (0)"`
	EndIdx        *int     `json:"end_idx,omitempty" jsonschema:"last index (inclusive); with tags it may be left out (the last item)"`
	View          string   `json:"view,omitempty" jsonschema:"effective (default: the thread with operations applied) or raw (the stored messages)"`
	MaxTokens     *int     `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): long bodies are cut with a marker saying how to read on, and the messages that do not fit are left out, with next_start_idx to continue from"`
	ContentOffset int      `json:"content_offset,omitempty" jsonschema:"with start_idx equal to end_idx: give that message's content from this character on (a cut body's marker names it)"`
	Tags          []string `json:"tags,omitempty" jsonschema:"only the items of the range that carry any of these tags (an item passes if it carries one of them; case ignored); indices stay those of the effective thread, for edits. start_idx and end_idx may then be left out for the whole thread. A tag no item carries is refused"`
}

// MessageRangeResult is get_message_range's result.
type MessageRangeResult struct {
	SessionID string       `json:"session_id"`
	Version   uint64       `json:"version"`
	Total     int          `json:"total"`
	Messages  []MessageOut `json:"messages"`
	// Tagged counts, with tags, the items of the range that carry them.
	Tagged *int `json:"tagged,omitempty"`
	// NextStartIdx is where to continue when messages did not fit.
	NextStartIdx *int `json:"next_start_idx,omitempty"`
	Fit
}

// maxRange bounds one get_message_range call.
const maxRange = 2000

// errPacked stops a scan of stored messages once a result is full.
var errPacked = errors.New("the result is full")

// getMessageRange returns an inclusive range of the effective thread, or
// of the stored messages with view=raw, within a budget.
func getMessageRange(s *ops.Service, _ context.Context, a MessageRangeArgs) (MessageRangeResult, error) {
	raw, err := viewArg(a.View)
	if err != nil {
		return MessageRangeResult{}, err
	}
	byTag := len(a.Tags) > 0
	if byTag && raw {
		return MessageRangeResult{}, errTagsRaw()
	}
	if !byTag && (a.StartIdx == nil || a.EndIdx == nil) {
		return MessageRangeResult{}, ops.Invalidf("give start_idx and end_idx (inclusive, 0-based)")
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return MessageRangeResult{}, err
	}
	if a.ContentOffset < 0 {
		return MessageRangeResult{}, ops.Invalidf("content_offset %d is negative: give the character to start at (0 is the start)", a.ContentOffset)
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return MessageRangeResult{}, err
	}
	v := snap.View
	total := v.Len()
	if raw {
		total = snap.Info.MessageCount
	}
	start, end := 0, total-1
	if a.StartIdx != nil {
		start = *a.StartIdx
	}
	if a.EndIdx != nil {
		end = *a.EndIdx
	}
	if a.ContentOffset > 0 && start != end {
		return MessageRangeResult{}, ops.Invalidf("content_offset reads on in one message: give start_idx equal to end_idx (a cut body's marker names both)")
	}
	if err := ops.CheckRange(start, end, total); err != nil {
		return MessageRangeResult{}, err
	}
	indices, err := rangeIndices(v, a.Tags, start, end)
	if err != nil {
		return MessageRangeResult{}, err
	}
	res := MessageRangeResult{SessionID: snap.Info.ID, Version: snap.Info.Version, Total: total, Messages: []MessageOut{}}
	if byTag {
		n := len(indices)
		res.Tagged = &n
	}
	var pk *packer
	err = s.Store().View(func(tx store.Tx) error {
		if raw {
			bodies, metas := make([]int, len(indices)), make([]int, len(indices))
			for k, i := range indices {
				if i < len(snap.Heads) {
					n := int(snap.Heads[i].Tokens)
					bodies[k], metas[k] = n+n/6, planMeta
				}
			}
			pk = newPacker(budget, countJSON(res), bodies, metas)
		} else {
			bodies, metas := planItems(v, snap.Heads, indices)
			pk = newPacker(budget, countJSON(res), bodies, metas)
		}
		if a.ContentOffset > 0 {
			o, err := rangeItem(tx, v, start, raw)
			if err != nil {
				return err
			}
			n := 0
			if err := readOn(&o, &n, a.ContentOffset); err != nil {
				return err
			}
			if packOne(pk, &o, n, bodyAt{index: start, raw: raw}, a.ContentOffset) {
				res.Messages = append(res.Messages, o)
			}
			return nil
		}
		if !raw {
			res.Messages, err = packMessages(tx, v, snap.Heads, indices, pk)
			return err
		}
		err := tx.Messages(snap.Info.ID, uint64(start+1), uint64(end+1), func(m model.Message) error {
			if pk.full {
				return errPacked
			}
			var tags []string
			if i := v.IndexOfSeq(m.Seq); i >= 0 {
				tags = v.Tags(v.Items[i])
			}
			if tags == nil {
				tags = []string{}
			}
			o := storedOut(int(m.Seq-1), &m, tags)
			if packOne(pk, &o, m.Tokens, bodyAt{index: int(m.Seq - 1), raw: true}, 0) {
				res.Messages = append(res.Messages, o)
			}
			return nil
		})
		if errors.Is(err, errPacked) {
			err = nil
		}
		return err
	})
	if err != nil {
		return MessageRangeResult{}, err
	}
	given := start + len(res.Messages)
	if a.ContentOffset == 0 {
		pk.omitted = len(indices) - len(res.Messages)
		if pk.omitted > 0 {
			given = indices[len(res.Messages)]
		}
	}
	next := ""
	if pk.omitted > 0 {
		res.NextStartIdx = &given
		next = fmt.Sprintf("messages %d..%d did not fit: call get_message_range again with start_idx=%d (next_start_idx) end_idx=%d", given, end, given, end)
		if byTag {
			next = fmt.Sprintf("%d items with those tags in %d..%d did not fit: call get_message_range again with the same tags, start_idx=%d (next_start_idx) end_idx=%d", pk.omitted, given, end, given, end)
		}
	}
	res.Fit = pk.fit(nil, next)
	if res.NextStartIdx != nil {
		res.ResultTokens += 6
	}
	return res, nil
}

// rangeIndices are the indices get_message_range gives of start..end
// (checked): all of them, or with tags those of the items that carry
// any of them. More than maxRange in one call are refused, saying
// where to stop.
func rangeIndices(v *model.View, tags []string, start, end int) ([]int, error) {
	if len(tags) == 0 {
		if end-start+1 > maxRange {
			return nil, ops.Invalidf("%d items is more than %d in one call: ask for %d..%d, then continue from %d", end-start+1, maxRange, start, start+maxRange-1, start+maxRange)
		}
		return span(start, end+1), nil
	}
	if err := ops.CheckTags(v, "tags", tags); err != nil {
		return nil, err
	}
	tagged := v.Tagged(tags)
	lo, _ := slices.BinarySearch(tagged, start)
	hi, _ := slices.BinarySearch(tagged, end+1)
	in := tagged[lo:hi]
	if len(in) > maxRange {
		last := in[maxRange-1]
		return nil, ops.Invalidf("%d items of %d..%d carry those tags, more than %d in one call: ask for %d..%d, then continue from %d", len(in), start, end, maxRange, start, last, last+1)
	}
	return in, nil
}

// rangeItem reads one item for get_message_range: of the effective
// thread, or with raw the stored message at that position.
func rangeItem(tx store.Tx, v *model.View, i int, raw bool) (MessageOut, error) {
	if !raw {
		return itemOut(tx, v, i)
	}
	m, err := tx.Message(v.SessionID, uint64(i+1))
	if err != nil {
		return MessageOut{}, err
	}
	tags := []string{}
	if j := v.IndexOfSeq(m.Seq); j >= 0 && v.Tags(v.Items[j]) != nil {
		tags = v.Tags(v.Items[j])
	}
	return storedOut(i, &m, tags), nil
}

// readOn makes a message its content from a character on: what a cut
// body's marker asks for. Its parts came with its start.
func readOn(o *MessageOut, n *int, offset int) error {
	if chars := countRunes(o.Content); offset >= chars {
		return ops.Invalidf("content_offset %d is past the end of %s's content (%s characters)", offset, o.ID, english.Thousands(chars))
	}
	o.Content = o.Content[runeOffset(o.Content, offset):]
	o.ContentOffset, o.Parts = offset, nil
	*n = textTokens(o.Content, 0)
	return nil
}

func viewArg(v string) (raw bool, err error) {
	v, err = ops.ChoiceArg("view", v, ops.Views())
	return v == ops.ViewRaw, err
}

// StartupContextArgs are get_startup_context's arguments.
type StartupContextArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Summaries *int   `json:"summaries,omitempty" jsonschema:"how many of the latest summaries (default 2)"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the summaries and the latest turns first, long bodies cut with a marker saying how to read on; older turns that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the older turns it left out"`
}

// StartupContextResult is get_startup_context's result (seed 003).
// UnsummarizedCount counts every unsummarized turn; Unsummarized gives
// the latest that fit the budget.
type StartupContextResult struct {
	Summaries         []SummaryOut `json:"summaries"`
	Unsummarized      []MessageOut `json:"unsummarized"`
	UnsummarizedCount int          `json:"unsummarized_count"`
	Fit
}

// getStartupContext returns the startup package: the latest summaries and
// the unsummarized turns, by recency, with no search; within a budget,
// the summaries and the latest turns first.
func getStartupContext(s *ops.Service, _ context.Context, a StartupContextArgs) (StartupContextResult, error) {
	const tool = "get_startup_context"
	n := 2
	if a.Summaries != nil {
		if *a.Summaries < 0 {
			return StartupContextResult{}, ops.Invalidf("summaries %d is negative; ask for 0 or more (default 2)", *a.Summaries)
		}
		n = *a.Summaries
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return StartupContextResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return StartupContextResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return StartupContextResult{}, err
	}
	p := thread.PlanStartup(snap.View, n)
	res := StartupContextResult{Summaries: []SummaryOut{}, Unsummarized: []MessageOut{}, UnsummarizedCount: len(p.Unsummarized)}
	order := itemOrder{v: snap.View, summaries: reversed(p.Summaries), messages: reversed(p.Unsummarized)}
	place := place(snap, tool, a, false)
	err = s.Store().View(func(tx store.Tx) error {
		sums, msgs, pk, next, err := readPage(tx, place, order, snap.Heads, cur, budget, res)
		if err != nil {
			return err
		}
		res.Summaries, res.Unsummarized = sums, msgs
		res.Fit = pk.fit(next, fmt.Sprintf("%d older unsummarized turns did not fit: call %s again with cursor=next_cursor, or read them with get_message_range", pk.omitted, tool))
		return nil
	})
	return res, err
}
