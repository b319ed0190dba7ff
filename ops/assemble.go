package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"weft/formats"
	"weft/formats/export"
	"weft/model"
	"weft/store"
)

// Preferences are what a model asked to see in its next context
// (request_context_slice). They are kept by item ID, so edits in between
// do not shift them, and consumed by the next assembly, once.
type Preferences struct {
	FirstID              model.ItemID `json:"first_id,omitempty"`
	LastID               model.ItemID `json:"last_id,omitempty"`
	StartIndex           int          `json:"start_index"`
	EndIndex             int          `json:"end_index"`
	Query                string       `json:"query,omitempty"`
	IncludeSearchResults bool         `json:"include_search_results,omitempty"`
	MaxContextMessages   int          `json:"max_context_messages,omitempty"`
	RequestedAt          string       `json:"requested_at"`
	RequestedBy          string       `json:"requested_by"`
}

// ContextSliceArgs are request_context_slice's arguments (seed 001).
type ContextSliceArgs struct {
	SessionID            string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	StartMessageIndex    *int   `json:"start_message_index" jsonschema:"first index of the slice, 0-based in the effective thread"`
	EndMessageIndex      *int   `json:"end_message_index" jsonschema:"last index of the slice (inclusive)"`
	IncludeSearchResults bool   `json:"include_search_results,omitempty" jsonschema:"also include the messages that match query"`
	Query                string `json:"query,omitempty" jsonschema:"substring whose matches to include (with include_search_results)"`
	MaxContextMessages   int    `json:"max_context_messages,omitempty" jsonschema:"limit the next context to this many messages"`
}

// ContextSliceResult is request_context_slice's result.
type ContextSliceResult struct {
	Success bool        `json:"success"`
	Pending Preferences `json:"pending"`
}

// RequestContextSlice records what the next assembled context should hold.
// It replaces any preferences still pending; the next assembly uses them
// once. It does not change the thread, so the version stays.
func (s *Service) RequestContextSlice(ctx context.Context, a ContextSliceArgs) (ContextSliceResult, error) {
	if a.StartMessageIndex == nil || a.EndMessageIndex == nil {
		return ContextSliceResult{}, invalidf("give start_message_index and end_message_index (inclusive, 0-based in the effective thread)")
	}
	if a.MaxContextMessages < 0 {
		return ContextSliceResult{}, invalidf("max_context_messages %d is negative", a.MaxContextMessages)
	}
	if a.IncludeSearchResults && strings.TrimSpace(a.Query) == "" {
		return ContextSliceResult{}, invalidf("include_search_results needs a query to search for")
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return ContextSliceResult{}, err
	}
	v := snap.view
	start, end := *a.StartMessageIndex, *a.EndMessageIndex
	if err := checkRangeAs("start_message_index", "end_message_index", start, end, v.Len()); err != nil {
		return ContextSliceResult{}, err
	}
	p := Preferences{
		FirstID: v.ID(v.Items[start]), LastID: v.ID(v.Items[end]), StartIndex: start, EndIndex: end,
		Query: a.Query, IncludeSearchResults: a.IncludeSearchResults, MaxContextMessages: a.MaxContextMessages,
		RequestedAt: formatTime(s.clock()), RequestedBy: AuthorFrom(ctx),
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return ContextSliceResult{}, err
	}
	if err := s.st.Update(func(tx *store.Tx) error { return tx.PutPrefs(snap.info.ID, raw) }); err != nil {
		return ContextSliceResult{}, err
	}
	return ContextSliceResult{Success: true, Pending: p}, nil
}

// AssembleArgs are assemble_context's arguments.
type AssembleArgs struct {
	SessionID   string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Format      string `json:"format,omitempty" jsonschema:"openai (chat-completions messages, the default), anthropic (a Messages API body: system and messages) or text (one transcript)"`
	MaxTokens   int    `json:"max_tokens,omitempty" jsonschema:"fit the context in this many tokens: the most recent turns raw, then the latest summaries of older parts; the oldest are left out first (0: no limit)"`
	MaxMessages int    `json:"max_messages,omitempty" jsonschema:"keep at most this many of the latest items (0: all)"`
}

// ChatMessage is a message as a chat-completions request carries it, its
// content one string (images are placeholders in an assembled context).
type ChatMessage struct {
	Role       model.Role              `json:"role"`
	Content    string                  `json:"content"`
	Name       string                  `json:"name,omitempty"`
	ToolCalls  []export.OpenAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string                  `json:"tool_call_id,omitempty"`
}

// OmittedRange is a run of the effective thread an assembly left out,
// and why.
type OmittedRange struct {
	StartIdx  int          `json:"start_idx"`
	EndIdx    int          `json:"end_idx"`
	FirstID   model.ItemID `json:"first_id"`
	LastID    model.ItemID `json:"last_id"`
	Count     int          `json:"count"`
	Tokens    int          `json:"tokens"`
	Summaries int          `json:"summaries"`
	// Reason is "not requested" (outside the pending preferences'
	// slice), "max_messages" or "max_tokens".
	Reason string `json:"reason"`
}

// AssembleResult is assemble_context's result.
type AssembleResult struct {
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	Format    string `json:"format"`
	// Messages is the thread for format openai.
	Messages []ChatMessage `json:"messages,omitempty"`
	// Anthropic is the request body for format anthropic.
	Anthropic *export.AnthropicBody `json:"anthropic,omitempty"`
	// Text is the transcript for format text.
	Text string `json:"text,omitempty"`
	// Count is the number of items of the effective thread included,
	// SummariesIncluded how many of them are summaries.
	Count             int `json:"message_count"`
	SummariesIncluded int `json:"summaries_included"`
	// Tokens is the sum of the included items' tokens.
	Tokens    int `json:"tokens"`
	MaxTokens int `json:"max_tokens,omitempty"`
	// LeftOut counts the effective thread's items not included, and
	// Omitted lists them as runs of indices (at most maxOmittedRanges;
	// OmittedNotListed counts the runs past those).
	LeftOut          int            `json:"left_out"`
	LeftOutTokens    int            `json:"left_out_tokens"`
	Omitted          []OmittedRange `json:"omitted"`
	OmittedNotListed int            `json:"omitted_not_listed,omitempty"`
	// Adjustments say what the provider's shape required: a tool call
	// whose result was left out, folded into text; images as
	// placeholders.
	Adjustments []string `json:"adjustments,omitempty"`
	// Preferences are the pending ones this assembly used up, if any.
	Preferences *Preferences `json:"preferences_used"`
}

// maxOmittedRanges bounds the runs an assembly lists as left out.
const maxOmittedRanges = 100

// asmFormat checks a format argument; openai is the default.
func asmFormat(f string, allowed ...string) (string, error) {
	if f == "" {
		return allowed[0], nil
	}
	if slices.Contains(allowed, f) {
		return f, nil
	}
	return "", invalidf("format %q is not %s", f, asmOr(allowed))
}

// asmOr lists choices as "a, b or c".
func asmOr(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// AssembleContext builds the context to send: the effective thread, or
// the slice pending preferences ask for (consumed here, once), trimmed to
// the latest max_messages and fitted to max_tokens. A refused request
// leaves pending preferences where they were.
func (s *Service) AssembleContext(_ context.Context, a AssembleArgs) (AssembleResult, error) {
	format, err := asmFormat(a.Format, "openai", "anthropic", "text")
	if err != nil {
		return AssembleResult{}, err
	}
	if a.MaxMessages < 0 {
		return AssembleResult{}, invalidf("max_messages %d is negative; use 0 for all", a.MaxMessages)
	}
	if a.MaxTokens < 0 {
		return AssembleResult{}, invalidf("max_tokens %d is negative; use 0 for no limit", a.MaxTokens)
	}
	snap, heads, err := s.asmSnapshot(a.SessionID)
	if err != nil {
		return AssembleResult{}, err
	}
	v := snap.view
	res := AssembleResult{SessionID: snap.info.ID, Version: snap.info.Version, Format: format, MaxTokens: a.MaxTokens}
	err = s.st.Update(func(tx *store.Tx) error {
		raw, err := tx.TakePrefs(snap.info.ID)
		if err != nil {
			return err
		}
		picked := span(0, v.Len())
		limit := a.MaxMessages
		if raw != nil {
			var p Preferences
			if err := json.Unmarshal(raw, &p); err != nil {
				return fmt.Errorf("pending preferences of session %s are unreadable: %w", snap.info.ID, err)
			}
			res.Preferences = &p
			if picked, err = s.preferred(tx, v, &p); err != nil {
				return err
			}
			if p.MaxContextMessages > 0 && (limit == 0 || p.MaxContextMessages < limit) {
				limit = p.MaxContextMessages
			}
		}
		limited := picked
		if limit > 0 && len(limited) > limit {
			limited = limited[len(limited)-limit:]
		}
		kept := limited
		if a.MaxTokens > 0 {
			kept = asmFit(v, heads, limited, a.MaxTokens)
			if len(kept) == 0 && len(limited) > 0 {
				newest := limited[len(limited)-1]
				return invalidf("max_tokens %d is too small: nothing fits, and the newest item (%d, %s) alone has %d tokens; give at least that",
					a.MaxTokens, newest, v.ID(v.Items[newest]), asmTokens(v, heads, newest))
			}
		}
		for _, i := range kept {
			res.Tokens += asmTokens(v, heads, i)
			if asmIsSummary(v, i) {
				res.SummariesIncluded++
			}
		}
		res.Count = len(kept)
		res.Omitted, res.OmittedNotListed, res.LeftOut, res.LeftOutTokens = asmOmitted(v, heads, picked, limited, kept)
		items, images, err := asmItems(tx, v, kept)
		if err != nil {
			return err
		}
		if images > 0 {
			res.Adjustments = append(res.Adjustments, plural(images, "image is", "images are")+" shown as a placeholder ([image TYPE]); weft export keeps them")
		}
		return asmRender(format, items, &res.Messages, &res.Anthropic, &res.Text, &res.Adjustments)
	})
	if err != nil {
		return AssembleResult{}, err
	}
	return res, nil
}

// asmRender writes items in a format: openai messages, an anthropic body
// or a text transcript, adding what the conversion had to change to
// notes.
func asmRender(format string, items []formats.Item, msgs *[]ChatMessage, body **export.AnthropicBody, text *string, notes *[]string) error {
	var folded []string
	switch format {
	case "openai":
		*msgs, folded = asmOpenAI(items)
	case "anthropic":
		*body, folded = asmAnthropic(items)
	default:
		*text = asmText(items)
	}
	*notes = append(*notes, folded...)
	return nil
}

// asmSnapshot is a snapshot with the heads of the stored messages, whose
// token counts a budget needs. Heads only grow at the end, so the slice
// stays valid.
func (s *Service) asmSnapshot(ref string) (snapshot, []model.Head, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.resolveLocked(ref)
	if err != nil {
		return snapshot{}, nil, err
	}
	th, err := s.threadLocked(id)
	if err != nil {
		return snapshot{}, nil, err
	}
	heads := th.heads[:len(th.heads):len(th.heads)]
	return snapshot{info: th.info, view: th.viewLocked(), ops: th.ops}, heads, nil
}

// asmTokens is an item's token count, from its head or its synthetic
// record: no body is read.
func asmTokens(v *model.View, heads []model.Head, i int) int {
	it := v.Items[i]
	if it.Seq > 0 {
		if int(it.Seq) <= len(heads) {
			return int(heads[it.Seq-1].Tokens)
		}
		return 0
	}
	return v.Synth[it.Synth].Tokens
}

// asmIsSummary reports whether an item is a digest's summary.
func asmIsSummary(v *model.View, i int) bool {
	it := v.Items[i]
	return it.Seq == 0 && v.Synth[it.Synth].OpType == model.OpDigest
}

// asmIsToolResult reports whether an item is a tool's message.
func asmIsToolResult(v *model.View, heads []model.Head, i int) bool {
	it := v.Items[i]
	if it.Seq > 0 {
		return int(it.Seq) <= len(heads) && heads[it.Seq-1].Role == model.RoleTool.Code()
	}
	return v.Synth[it.Synth].Role == model.RoleTool
}

// asmIsPinned reports whether an item is a stored system message: one
// of the system prompt when only such messages stand before it.
func asmIsPinned(v *model.View, heads []model.Head, i int) bool {
	it := v.Items[i]
	return it.Seq > 0 && int(it.Seq) <= len(heads) && heads[it.Seq-1].Role == model.RoleSystem.Code()
}

// asmRecentShare is the part of a token budget the most recent turns get
// before summaries of older parts are considered; the rest of the budget
// goes to summaries, then to further turns.
const asmRecentShare = 0.75

// asmFit chooses, from sel (indices in thread order), what fits in
// budget tokens, by tiers (seed 004): the system prompt (stored system
// messages at the very start) if it fits; the most recent items, newest
// first, up to three quarters of the budget (the newest one up to all
// of it); then the summaries among the older items, newest first, until
// one does not fit; then, with what is left, the items before the recent
// run, newest first, until one does not fit. So what goes first is
// always the oldest: older turns, then older summaries. Tool results at
// the start of a run, whose calls were left out, go too. It returns the
// chosen indices in thread order.
func asmFit(v *model.View, heads []model.Head, sel []int, budget int) []int {
	take := make([]bool, len(sel))
	used := 0
	fits := func(k, limit int) bool {
		t := asmTokens(v, heads, sel[k])
		if used+t > limit {
			return false
		}
		take[k] = true
		used += t
		return true
	}
	p := 0
	for p < len(sel) && sel[p] == p && asmIsPinned(v, heads, sel[p]) {
		fits(p, budget)
		p++
	}
	share := used + int(float64(budget-used)*asmRecentShare)
	k := len(sel) - 1
	for ; k >= p; k-- {
		limit := share
		if k == len(sel)-1 {
			limit = budget
		}
		if !fits(k, limit) {
			break
		}
	}
	for j := k; j >= p; j-- {
		if asmIsSummary(v, sel[j]) && !fits(j, budget) {
			break
		}
	}
	for j := k; j >= p; j-- {
		if !take[j] && !fits(j, budget) {
			break
		}
	}
	// A run that starts with tool results would answer calls that were
	// left out: the results go too, rather than reach the model as
	// answers to nothing.
	for k := range sel {
		if take[k] && (k == 0 || !take[k-1]) && asmIsToolResult(v, heads, sel[k]) {
			take[k] = false
		}
	}
	n := 0
	for _, t := range take {
		if t {
			n++
		}
	}
	out := make([]int, 0, n)
	for k, i := range sel {
		if take[k] {
			out = append(out, i)
		}
	}
	return out
}

// asmOmitted lists the effective thread's items that are not kept, as
// runs with the reason each was left out: not in picked (the pending
// preferences' selection), not in limited (max_messages), or not in
// kept (max_tokens). All three are sorted, each within the one before.
func asmOmitted(v *model.View, heads []model.Head, picked, limited, kept []int) (ranges []OmittedRange, notListed, count, tokens int) {
	ranges = []OmittedRange{}
	var pi, li, ki int
	in := func(xs []int, at *int, i int) bool {
		for *at < len(xs) && xs[*at] < i {
			*at++
		}
		return *at < len(xs) && xs[*at] == i
	}
	var cur *OmittedRange
	prev, prevReason := -2, ""
	// closeRun names the last item of the run being built: IDs are made
	// once per run, not per item.
	closeRun := func() {
		if cur != nil {
			cur.LastID = v.ID(v.Items[cur.EndIdx])
			cur = nil
		}
	}
	for i := range v.Len() {
		reason := ""
		switch {
		case !in(picked, &pi, i):
			reason = "not requested"
		case !in(limited, &li, i):
			reason = "max_messages"
		case !in(kept, &ki, i):
			reason = "max_tokens"
		default:
			continue
		}
		t := asmTokens(v, heads, i)
		count++
		tokens += t
		if i != prev+1 || reason != prevReason { // a new run
			closeRun()
			if len(ranges) < maxOmittedRanges {
				ranges = append(ranges, OmittedRange{StartIdx: i, FirstID: v.ID(v.Items[i]), Reason: reason})
				cur = &ranges[len(ranges)-1]
			} else {
				notListed++
			}
		}
		prev, prevReason = i, reason
		if cur == nil {
			continue
		}
		cur.EndIdx = i
		cur.Count++
		cur.Tokens += t
		if asmIsSummary(v, i) {
			cur.Summaries++
		}
	}
	closeRun()
	return ranges, notListed, count, tokens
}

// asmItems reads view items as exporters take them, with image data
// dropped (an assembled context is text; the exporters write a
// placeholder instead) and counted. Stored bodies are read in one pass
// over their seqs when they lie close together, else one by one.
func asmItems(tx *store.Tx, v *model.View, indices []int) ([]formats.Item, int, error) {
	items := make([]formats.Item, len(indices))
	pos := make(map[uint64]int)
	lo, hi := uint64(0), uint64(0)
	for k, i := range indices {
		it := v.Items[i]
		if it.Seq > 0 {
			pos[it.Seq] = k
			if lo == 0 || it.Seq < lo {
				lo = it.Seq
			}
			hi = max(hi, it.Seq)
			continue
		}
		sy := &v.Synth[it.Synth]
		items[k] = formats.Item{
			ID: sy.ID(), Role: sy.Role, Content: sy.Content, Name: sy.Name, CreatedAt: sy.CreatedAt,
			Tokens: sy.Tokens, Tags: v.Tags(it), Synthetic: true, OpID: sy.OpID, OpType: sy.OpType,
		}
	}
	put := func(m model.Message) error {
		k, ok := pos[m.Seq]
		if ok {
			items[k] = storedItem(&m)
			items[k].Tags = v.Tags(v.Items[indices[k]])
		}
		return nil
	}
	var err error
	switch {
	case len(pos) == 0:
	case hi-lo+1 <= 4*uint64(len(pos)):
		err = tx.Messages(v.SessionID, lo, hi, put)
	default:
		for seq := range pos {
			m, err := tx.Message(v.SessionID, seq)
			if err != nil {
				return nil, 0, err
			}
			_ = put(m)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	images := 0
	for k := range items {
		for p := range items[k].Parts {
			if part := &items[k].Parts[p]; part.Type == model.PartImage && len(part.Raw) > 0 {
				part.Raw = nil
				images++
			}
		}
	}
	return items, images, nil
}

// asmOpenAI converts items with the OpenAI exporter, so the messages
// keep its guarantees: every tool message answers a call of the
// assistant message before it, and a call or result whose other half is
// not in the thread is folded into text.
func asmOpenAI(items []formats.Item) ([]ChatMessage, []string) {
	msgs, rep := export.OpenAI(items)
	out := make([]ChatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = ChatMessage{Role: model.Role(m.Role), Content: asmContentText(m.Content), Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return out, rep.Folded
}

// asmContentText is a chat message's content as one string: the string,
// or its parts' texts joined (only images make the exporter write parts,
// and images are placeholders here); "" for none.
func asmContentText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []export.OpenAIPart:
		texts := make([]string, 0, len(c))
		for _, p := range c {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n\n")
	}
	return ""
}

// asmAnthropic converts items with the Anthropic exporter: alternating
// roles, tool results right after their calls, the leading system
// messages as the system prompt.
func asmAnthropic(items []formats.Item) (*export.AnthropicBody, []string) {
	body, rep := export.Anthropic(items)
	return &body, rep.Folded
}

// asmText is a plain transcript: "role: content", a blank line between.
func asmText(items []formats.Item) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%s: %s\n\n", it.Role, it.Content)
	}
	return b.String()
}

// preferred returns the indices pending preferences select: the slice
// (found again by ID; by its recorded indices if an edit removed an end)
// and, if asked, the search matches, in thread order.
func (s *Service) preferred(tx *store.Tx, v *model.View, p *Preferences) ([]int, error) {
	n := v.Len()
	start, end := v.IndexOf(p.FirstID), v.IndexOf(p.LastID)
	if start < 0 {
		start = min(p.StartIndex, n)
	}
	if end < 0 {
		end = min(p.EndIndex, n-1)
	}
	indices := span(start, end+1)
	if p.IncludeSearchResults && p.Query != "" {
		matches, _, err := searchView(tx, v, p.Query, false, 0)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if m < start || m > end {
				indices = append(indices, m)
			}
		}
		slices.Sort(indices)
	}
	return indices, nil
}
