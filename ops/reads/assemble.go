package reads

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"weft/ops"
	"weft/ops/search"

	"weft/formats"
	"weft/formats/export"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops/assemble"
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
	SessionID            string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
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
func RequestContextSlice(s *ops.Service, ctx context.Context, a ContextSliceArgs) (ContextSliceResult, error) {
	if a.StartMessageIndex == nil || a.EndMessageIndex == nil {
		return ContextSliceResult{}, ops.Invalidf("give start_message_index and end_message_index (inclusive, 0-based in the effective thread)")
	}
	if a.MaxContextMessages < 0 {
		return ContextSliceResult{}, ops.Invalidf("max_context_messages %d is negative", a.MaxContextMessages)
	}
	if a.IncludeSearchResults && strings.TrimSpace(a.Query) == "" {
		return ContextSliceResult{}, ops.Invalidf("include_search_results needs a query to search for")
	}
	var p Preferences
	_, err := s.Write(ctx, a.SessionID, nil, func(_ store.Tx, c *ops.Thread, _ *model.Session) (*ops.Change, error) {
		v := c.View()
		start, end := *a.StartMessageIndex, *a.EndMessageIndex
		if err := ops.CheckRangeAs("start_message_index", "end_message_index", start, end, v.Len()); err != nil {
			return nil, err
		}
		p = Preferences{
			FirstID: v.ID(v.Items[start]), LastID: v.ID(v.Items[end]), StartIndex: start, EndIndex: end,
			Query: a.Query, IncludeSearchResults: a.IncludeSearchResults, MaxContextMessages: a.MaxContextMessages,
			RequestedAt: ops.FormatTime(s.Clock()), RequestedBy: ops.AuthorFrom(ctx),
		}
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		id := c.Info.ID
		return &ops.Change{
			What:  fmt.Sprintf("context slice %d..%d requested", start, end),
			Aside: true,
			Store: func(tx store.Tx) error { return tx.PutPrefs(id, raw) },
			Event: ops.Event{Kind: ops.EventPreferences},
		}, nil
	})
	if err != nil {
		return ContextSliceResult{}, err
	}
	return ContextSliceResult{Success: true, Pending: p}, nil
}

// AssembleArgs are assemble_context's arguments.
type AssembleArgs struct {
	SessionID   string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Format      string `json:"format,omitempty" jsonschema:"openai (chat-completions messages, the default), anthropic (a Messages API body: system and messages) or text (one transcript)"`
	MaxTokens   *int   `json:"max_tokens,omitempty" jsonschema:"fit the context in this many tokens: the most recent turns raw, then the latest summaries of older parts; the oldest are left out first (default: what the calling client keeps whole, 16000 tokens for most; 0: no limit)"`
	MaxMessages int    `json:"max_messages,omitempty" jsonschema:"keep at most this many of the latest items (0: all)"`
}

// AssembleResult is assemble_context's result.
type AssembleResult struct {
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	Format    string `json:"format"`
	// Messages is the thread for format openai.
	Messages []assemble.ChatMessage `json:"messages,omitempty"`
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
	// Omitted lists them as runs of indices (at most assemble.MaxOmittedRanges;
	// OmittedNotListed counts the runs past those).
	LeftOut          int                     `json:"left_out"`
	LeftOutTokens    int                     `json:"left_out_tokens"`
	Omitted          []assemble.OmittedRange `json:"omitted"`
	OmittedNotListed int                     `json:"omitted_not_listed,omitempty"`
	// Complete is true when no item was left out; Next says how to get
	// those that were.
	Complete bool   `json:"complete"`
	Next     string `json:"next,omitempty"`
	// Adjustments say what the provider's shape required: a tool call
	// whose result was left out, folded into text; images as
	// placeholders.
	Adjustments []string `json:"adjustments,omitempty"`
	// Preferences are the pending ones this assembly used up, if any.
	Preferences *Preferences `json:"preferences_used"`
}

// formatArg checks a format argument; openai is the default.
func formatArg(f string, allowed ...string) (string, error) {
	if f == "" {
		return allowed[0], nil
	}
	if slices.Contains(allowed, f) {
		return f, nil
	}
	return "", ops.Invalidf("format %q is not %s", f, ops.OrList(allowed))
}

// AssembleContext builds the context to send: the effective thread, or
// the slice pending preferences ask for (consumed here, once), trimmed to
// the latest max_messages and fitted to max_tokens. A refused request
// leaves pending preferences where they were.
func AssembleContext(s *ops.Service, ctx context.Context, a AssembleArgs) (AssembleResult, error) {
	format, err := formatArg(a.Format, ops.AssembleFormats()...)
	if err != nil {
		return AssembleResult{}, err
	}
	if a.MaxMessages < 0 {
		return AssembleResult{}, ops.Invalidf("max_messages %d is negative; use 0 for all", a.MaxMessages)
	}
	if a.MaxTokens != nil && *a.MaxTokens < 0 {
		return AssembleResult{}, ops.Invalidf("max_tokens %d is negative; use 0 for no limit", *a.MaxTokens)
	}
	// Without max_tokens the result fits a read's default budget: its
	// JSON, not only the items' own tokens, which a provider's shape and
	// the escapes add to.
	// A caller's cap (an MCP client's) sets that budget, and may hold
	// the JSON's bytes too.
	given, fitJSON, capBytes := 0, false, 0
	if a.MaxTokens != nil {
		given = *a.MaxTokens
	} else if c, ok := CapFrom(ctx); ok {
		given, fitJSON, capBytes = c.Tokens, true, c.Bytes
	} else {
		given, fitJSON = DefaultMaxTokens, true
	}
	var res AssembleResult
	_, err = s.Write(ctx, a.SessionID, nil, func(tx store.Tx, c *ops.Thread, _ *model.Session) (*ops.Change, error) {
		v, heads := c.View(), c.Heads
		raw, err := tx.Prefs(c.Info.ID)
		if err != nil {
			return nil, err
		}
		picked := span(0, v.Len())
		limit := a.MaxMessages
		var prefs *Preferences
		if raw != nil {
			var p Preferences
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("pending preferences of session %s are unreadable: %w", c.Info.ID, err)
			}
			prefs = &p
			if picked, err = preferred(s, tx, v, &p); err != nil {
				return nil, err
			}
			if p.MaxContextMessages > 0 && (limit == 0 || p.MaxContextMessages < limit) {
				limit = p.MaxContextMessages
			}
		}
		limited := picked
		if limit > 0 && len(limited) > limit {
			limited = limited[len(limited)-limit:]
		}
		budget := given
		for round := 0; ; round++ {
			res = AssembleResult{SessionID: c.Info.ID, Version: c.Info.Version, Format: format, MaxTokens: budget, Preferences: prefs}
			if err := assembleInto(&res, tx, v, heads, picked, limited, budget, format); err != nil {
				return nil, err
			}
			if !fitJSON || round == 4 || res.Count <= 1 {
				break
			}
			b := formats.Marshal(res)
			n := Weigh(tokens.Count(string(b)), len(b), given, capBytes)
			if n <= given {
				break
			}
			// Pack the items to less, by how far the JSON was over.
			budget = max(int(int64(budget)*int64(given)*9/10/int64(n)), 1)
		}
		// It says the budget asked for, not the one it packed to.
		res.MaxTokens = given
		if raw == nil {
			return nil, nil // nothing pending: nothing to write
		}
		id := c.Info.ID
		return &ops.Change{
			What:  "pending context preferences used",
			Aside: true,
			Store: func(tx store.Tx) error { return tx.PutPrefs(id, nil) },
			Event: ops.Event{Kind: ops.EventPreferences},
		}, nil
	})
	if err != nil {
		return AssembleResult{}, err
	}
	return res, nil
}

// assembleInto fills res with the items of limited that fit budget
// (0: all) in format, and says what was left out of picked.
func assembleInto(res *AssembleResult, tx store.Tx, v *model.View, heads []model.Head, picked, limited []int, budget int, format string) error {
	kept := limited
	if budget > 0 {
		kept = assemble.Fit(v, heads, limited, budget)
		if len(kept) == 0 && len(limited) > 0 {
			newest := limited[len(limited)-1]
			return ops.Invalidf("max_tokens %d is too small: nothing fits, and the newest item (%d, %s) alone has %d tokens; give at least that",
				budget, newest, v.ID(v.Items[newest]), assemble.Tokens(v, heads, newest))
		}
	}
	for _, i := range kept {
		res.Tokens += assemble.Tokens(v, heads, i)
		if v.IsSummary(i) {
			res.SummariesIncluded++
		}
	}
	res.Count = len(kept)
	res.Omitted, res.OmittedNotListed, res.LeftOut, res.LeftOutTokens = assemble.Omitted(v, heads, picked, limited, kept)
	res.Complete = res.LeftOut == 0
	if !res.Complete {
		res.Next = fmt.Sprintf("%d items (%d tokens) were left out, the oldest first (omitted lists them): read them with get_message_range, or call assemble_context again with a larger max_tokens (0 for all)", res.LeftOut, res.LeftOutTokens)
	}
	items, images, err := ops.TextItems(tx, v, kept)
	if err != nil {
		return err
	}
	if images > 0 {
		res.Adjustments = append(res.Adjustments, ops.ImagesNote(images))
	}
	var folded []string
	switch format {
	case "openai":
		res.Messages, folded = assemble.OpenAI(items)
	case "anthropic":
		res.Anthropic, folded = assemble.Anthropic(items)
	default:
		res.Text = assemble.Text(items)
	}
	res.Adjustments = append(res.Adjustments, folded...)
	return nil
}

// preferred returns the indices pending preferences select: the slice
// (found again by ID; by its recorded indices if an edit removed an end)
// and, if asked, the search matches, in thread order.
func preferred(s *ops.Service, tx store.Tx, v *model.View, p *Preferences) ([]int, error) {
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
		matches, _, err := search.View(tx, v, p.Query, false, 0)
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
