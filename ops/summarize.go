package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"weft/internal/tokens"

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
	SourceSampling   = "sampling"
	SourceEndpoint   = "endpoint"
	SourceExtractive = "extractive"
)

// Environment of the endpoint source.
const (
	envSummaryURL     = "WEFT_SUMMARY_URL"
	envSummaryModel   = "WEFT_SUMMARY_MODEL"
	envSummaryKey     = "WEFT_SUMMARY_API_KEY"
	envSummaryTimeout = "WEFT_SUMMARY_TIMEOUT"
)

// ErrSummarySource marks a failure of a model asked for a summary (the
// client's or the endpoint's), as opposed to a bad request.
var ErrSummarySource = errors.New("summary source failed")

const (
	sumDefaultTokens = 300
	sumMinTokens     = 16
	sumMaxTokens     = 4000
	// sumDefaultTimeout bounds one endpoint request.
	sumDefaultTimeout = 60 * time.Second
	// A prompt holds at most sumPromptBytes of transcript, each message
	// at most sumMessageRunes (its start and its end).
	sumPromptBytes  = 200_000
	sumMessageRunes = 2000
	// sumMaxAnswer bounds what is read of an endpoint's answer.
	sumMaxAnswer = 4 << 20
)

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
			return SummarizeResult{}, invalidf("max_tokens %d is outside %d..%d (default %d)", maxTokens, sumMinTokens, sumMaxTokens, sumDefaultTokens)
		}
	}
	source, err := s.sumSource(ctx, a.Source)
	if err != nil {
		return SummarizeResult{}, err
	}
	if _, err := validTags("when_tags", a.WhenTags, true); err != nil {
		return SummarizeResult{}, err
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return SummarizeResult{}, err
	}
	if err := checkVersion(&snap.info, a.ExpectedVersion); err != nil {
		return SummarizeResult{}, err
	}
	v := snap.view
	r, err := a.Selection.resolve(v)
	if err != nil {
		return SummarizeResult{}, err
	}
	indices := make([]int, len(r.targets))
	for k, id := range r.targets {
		indices[k] = v.IndexOf(id)
	}
	var items []formats.Item
	err = s.st.View(func(tx *store.Tx) error {
		items, _, err = asmItems(tx, v, indices)
		return err
	})
	if err != nil {
		return SummarizeResult{}, err
	}
	res := SummarizeResult{
		SessionID: snap.info.ID, Version: snap.info.Version, Source: source,
		StartIdx: r.first, EndIdx: r.end, MessageCount: len(items),
	}
	first, last := sumSpan(v, indices, items)
	res.TimeSpanStart, res.TimeSpanEnd = formatTime(first), formatTime(last)
	for _, it := range items {
		res.InputTokens += it.Tokens
	}
	about := sumAbout(snap.info.Title, r, len(items), first, last)

	switch source {
	case SourceExtractive:
		res.Summary = sumExtract(items, about, maxTokens)
	default:
		transcript, cut := sumTranscript(items, indices)
		res.PromptShortened = cut
		instructions := sumInstructions(about, maxTokens)
		if source == SourceSampling {
			res.Summary, res.Model, err = SamplerFrom(ctx)(ctx, instructions+"\n\n"+transcript, maxTokens)
			if err != nil {
				err = fmt.Errorf("%w: sampling: %w (source=extractive makes one locally)", ErrSummarySource, err)
			}
		} else {
			res.Summary, res.Model, err = sumAskEndpoint(ctx, instructions, transcript, maxTokens)
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
	if !a.Store {
		return res, nil
	}
	op, err := s.DigestMessages(ctx, DigestArgs{
		Selection:   Selection{SessionID: snap.info.ID, IDs: r.targets},
		Summary:     res.Summary,
		EditOptions: a.EditOptions,
	})
	if err != nil {
		return SummarizeResult{}, fmt.Errorf("the summary was written but could not be stored: %w", err)
	}
	res.Stored, res.OperationID, res.Version = true, op.OperationID, op.Version
	return res, nil
}

// sumSource picks the summary source: the one asked for, if it is
// there, or with auto the first that is.
func (s *Service) sumSource(ctx context.Context, asked string) (string, error) {
	canSample := SamplerFrom(ctx) != nil
	hasEndpoint := strings.TrimSpace(os.Getenv(envSummaryURL)) != ""
	switch asked {
	case "", "auto":
		switch {
		case canSample:
			return SourceSampling, nil
		case hasEndpoint:
			return SourceEndpoint, nil
		}
		return SourceExtractive, nil
	case SourceSampling:
		if !canSample {
			return "", invalidf("source sampling: this caller cannot lend its model (only an MCP client that supports sampling can); use source endpoint or extractive")
		}
		return SourceSampling, nil
	case SourceEndpoint:
		if !hasEndpoint {
			return "", invalidf("source endpoint: %s is not set; set it to an OpenAI-compatible chat-completions URL (with %s and %s as needed), or use source extractive", envSummaryURL, envSummaryModel, envSummaryKey)
		}
		return SourceEndpoint, nil
	case SourceExtractive:
		return SourceExtractive, nil
	}
	return "", invalidf("source %q is not auto, sampling, endpoint or extractive", asked)
}

// sumSpan is the time span of the items: the times of the stored
// messages and the spans digests cover. Other synthetic items carry the
// time their operation was made, which says nothing of the
// conversation's.
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
		if sy := &v.Synth[it.Synth]; sy.OpType == model.OpDigest {
			see(sy.TimeSpanStart)
			see(sy.TimeSpanEnd)
		}
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
		fmt.Fprintf(&b, "%s between %d and %d", plural(n, "message", "messages"), r.first, r.end)
	}
	if title != "" {
		fmt.Fprintf(&b, " of %q", title)
	}
	if !first.IsZero() {
		b.WriteString(", ")
		b.WriteString(sumSpanText(first, last))
	}
	return b.String()
}

// sumSpanText writes a time span compactly: one date when it is within
// a day.
func sumSpanText(first, last time.Time) string {
	first, last = first.UTC(), last.UTC()
	const day, clock = "2006-01-02", "15:04"
	switch {
	case first.Equal(last):
		return first.Format(day+" "+clock) + " UTC"
	case first.Format(day) == last.Format(day):
		return first.Format(day+" "+clock) + "–" + last.Format(clock) + " UTC"
	}
	return first.Format(day+" "+clock) + " – " + last.Format(day+" "+clock) + " UTC"
}

func sumInstructions(about string, maxTokens int) string {
	return fmt.Sprintf("Summarize this part of a conversation (%s) so that the summary can stand in for it in the thread. "+
		"Keep decisions and their reasons, file names, tool names, commands, numbers and open questions; leave out pleasantries and repetition. "+
		"Write plain text of at most %d tokens, with no preamble.", about, maxTokens)
}

// sumTranscript is the range as a model reads it: one block per
// message with its index, role and time. Long messages keep their start
// and end; a range too long for one prompt keeps its first and last
// messages and says how many it left out. It returns the text and how
// many messages were shortened or left out.
func sumTranscript(items []formats.Item, indices []int) (string, int) {
	blocks := make([]string, len(items))
	cut := 0
	for k, it := range items {
		content := it.Content
		if n := utf8.RuneCountInString(content); n > sumMessageRunes {
			r := []rune(content)
			head, tail := sumMessageRunes*3/4, sumMessageRunes/5
			content = string(r[:head]) + fmt.Sprintf(" […%d characters…] ", n-head-tail) + string(r[n-tail:])
			cut++
		}
		role := string(it.Role)
		if it.Synthetic && it.OpType == model.OpDigest {
			role = "summary"
		}
		when := ""
		if !it.CreatedAt.IsZero() && !it.Synthetic {
			when = " " + it.CreatedAt.UTC().Format("2006-01-02 15:04")
		}
		blocks[k] = fmt.Sprintf("[%d] %s%s:\n%s", indices[k], role, when, content)
	}
	total := 0
	for _, b := range blocks {
		total += len(b) + 2
	}
	if total <= sumPromptBytes {
		return strings.Join(blocks, "\n\n"), cut
	}
	// Keep the start and the end, half the room each.
	var head, tail []string
	room := sumPromptBytes / 2
	i := 0
	for ; i < len(blocks) && room-len(blocks[i]) > 0; i++ {
		head = append(head, blocks[i])
		room -= len(blocks[i]) + 2
	}
	room = sumPromptBytes / 2
	j := len(blocks) - 1
	for ; j > i && room-len(blocks[j]) > 0; j-- {
		tail = append(tail, blocks[j])
		room -= len(blocks[j]) + 2
	}
	slices.Reverse(tail)
	left := j - i + 1
	out := append(head, fmt.Sprintf("[… %s left out of this prompt …]", plural(left, "message", "messages")))
	return strings.Join(append(out, tail...), "\n\n"), cut + left
}

// sumTimeout is how long an endpoint may take: WEFT_SUMMARY_TIMEOUT (a
// duration, or seconds), else a minute.
func sumTimeout() (time.Duration, error) {
	raw := strings.TrimSpace(os.Getenv(envSummaryTimeout))
	if raw == "" {
		return sumDefaultTimeout, nil
	}
	if d, err := time.ParseDuration(raw); err == nil && d > 0 {
		return d, nil
	}
	if n, err := strconv.ParseFloat(raw, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	return 0, invalidf("%s %q is not a positive duration (like 30s or 2m)", envSummaryTimeout, raw)
}

// sumEndpointURL is the chat-completions URL: WEFT_SUMMARY_URL as it is
// when it names chat/completions, else with that path added (so a base
// URL ending in /v1 works too).
func sumEndpointURL() (*url.URL, error) {
	raw := strings.TrimSpace(os.Getenv(envSummaryURL))
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalidf("%s %q is not an http(s) URL of an OpenAI-compatible chat-completions endpoint", envSummaryURL, raw)
	}
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions") {
		u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	}
	return u, nil
}

// sumAskEndpoint asks the configured OpenAI-compatible endpoint for a
// summary.
func sumAskEndpoint(ctx context.Context, instructions, transcript string, maxTokens int) (string, string, error) {
	u, err := sumEndpointURL()
	if err != nil {
		return "", "", err
	}
	timeout, err := sumTimeout()
	if err != nil {
		return "", "", err
	}
	where := u.Redacted()
	req := struct {
		Model       string        `json:"model,omitempty"`
		Messages    []ChatMessage `json:"messages"`
		MaxTokens   int           `json:"max_tokens"`
		Temperature float64       `json:"temperature"`
	}{
		Model: strings.TrimSpace(os.Getenv(envSummaryModel)),
		Messages: []ChatMessage{
			{Role: model.RoleSystem, Content: instructions},
			{Role: model.RoleUser, Content: transcript},
		},
		MaxTokens: maxTokens,
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", "", invalidf("%s: %v", envSummaryURL, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if key := strings.TrimSpace(os.Getenv(envSummaryKey)); key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		var netErr net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
			return "", "", fmt.Errorf("%w: the summary endpoint %s did not answer within %s (%s sets how long to wait)", ErrSummarySource, where, timeout, envSummaryTimeout)
		}
		return "", "", fmt.Errorf("%w: the summary endpoint %s cannot be reached: %v", ErrSummarySource, where, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, sumMaxAnswer+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", "", fmt.Errorf("%w: the summary endpoint %s did not finish its answer within %s (%s sets how long to wait)", ErrSummarySource, where, timeout, envSummaryTimeout)
		}
		return "", "", fmt.Errorf("%w: reading the summary endpoint's answer: %v", ErrSummarySource, err)
	}
	if len(answer) > sumMaxAnswer {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered with more than %d MB", ErrSummarySource, where, sumMaxAnswer>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered %s: %s", ErrSummarySource, where, resp.Status, sumErrorText(answer))
	}
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return "", "", fmt.Errorf("%w: the summary endpoint %s did not answer with chat-completions JSON (%v): %s", ErrSummarySource, where, err, sumPreview(answer))
	}
	if len(out.Choices) == 0 {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered without choices: %s", ErrSummarySource, where, sumPreview(answer))
	}
	c := out.Choices[0]
	if c.Message.Refusal != "" {
		return "", "", fmt.Errorf("%w: the endpoint's model refused: %s", ErrSummarySource, c.Message.Refusal)
	}
	if c.Message.Content == nil || strings.TrimSpace(*c.Message.Content) == "" {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered with no text (finish_reason %q)", ErrSummarySource, where, c.FinishReason)
	}
	m := out.Model
	if m == "" {
		m = req.Model
	}
	return *c.Message.Content, m, nil
}

// sumErrorText is what an endpoint's error answer says: its
// error.message when it is OpenAI's error JSON, else its start.
func sumErrorText(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var msg struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &msg) == nil && msg.Message != "" {
			return msg.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	return sumPreview(body)
}

// sumPreview quotes the start of an answer.
func sumPreview(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "(an empty body)"
	}
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:199]) + "…"
	}
	return strconv.Quote(s)
}

// The extractive summary: a header that says what the range is, the
// tools and files it mentions, then the most informative sentences, in
// thread order, as many as the budget holds. A sentence scores by how
// rare its words are in the range (so the distinctive ones win over
// chatter), with a bonus for words that mark decisions and problems,
// for file and tool names and numbers, and for what the user asked;
// near-repeats are skipped, and no message gives more than two
// sentences. Everything is deterministic.

var (
	// sumFileRE tells a word that is a file name or a path: a name with
	// a known extension, a path from /, ./, ../ or ~/, or one with two
	// slashes or more (one slash is as often a unit: ns/op, req/s).
	sumFileRE = regexp.MustCompile(`^(?:(?:[A-Za-z0-9_.~-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:go|mod|sum|py|js|ts|tsx|jsx|rs|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|sh|bash|zsh|sql|md|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|lock|html|css|scss|xml|csv|proto|tf|lua|ex|exs|vue|svelte|env|log|db)|(?:\.{0,2}|~)/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?|[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+){2,}/?)$`)
	sumWordRE = regexp.MustCompile(`[\p{L}\p{N}_]+`)
	// sumCodeFence matches a fenced code block.
	sumCodeFence = regexp.MustCompile("(?s)```.*?(```|$)")
	// sumURL and sumTag are links and markup tags, which are neither
	// files nor prose.
	sumURL = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://\S+`)
	sumTag = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9_-]*(?:\s[^<>]*)?>`)
)

var sumCues = map[string]bool{
	"decided": true, "decide": true, "decision": true, "chose": true, "choose": true, "agreed": true,
	"because": true, "instead": true, "should": true, "must": true, "need": true, "needs": true,
	"fix": true, "fixed": true, "bug": true, "error": true, "errors": true, "fail": true, "fails": true,
	"failed": true, "failing": true, "broken": true, "todo": true, "plan": true, "next": true,
	"problem": true, "issue": true, "works": true, "done": true, "result": true, "conclusion": true,
	"important": true, "risk": true, "tradeoff": true, "why": true, "cause": true,
}

var sumStop = map[string]bool{
	"the": true, "and": true, "for": true, "that": true, "this": true, "with": true, "you": true,
	"are": true, "was": true, "but": true, "not": true, "have": true, "has": true, "had": true,
	"can": true, "will": true, "would": true, "could": true, "from": true, "they": true, "them": true,
	"then": true, "than": true, "there": true, "here": true, "what": true, "when": true, "which": true,
	"into": true, "just": true, "like": true, "also": true, "some": true, "any": true, "all": true,
	"its": true, "it's": true, "our": true, "your": true, "yes": true, "okay": true, "let": true,
	"let's": true, "now": true, "one": true, "out": true, "about": true, "more": true, "been": true,
	"does": true, "did": true, "doing": true, "get": true, "got": true, "see": true, "sure": true,
	"thanks": true, "thank": true, "please": true, "great": true, "good": true, "well": true, "very": true,
	"how": true, "who": true, "where": true, "only": true, "each": true, "other": true, "these": true,
	"those": true, "being": true,
}

// sumPerItem is how many sentences of one message a summary takes at
// most, so one long message does not crowd out the rest.
const sumPerItem = 2

// sumUnit is a sentence of the range, a candidate for the summary.
type sumUnit struct {
	pos   int // order in the range
	item  int // the item it is from
	role  string
	text  string
	words []string // distinct, lower-cased, content words
	score float64
	cost  int
}

func sumExtract(items []formats.Item, about string, budget int) string {
	var tools, files []string
	toolCount := map[string]int{}
	fileSeen := map[string]bool{}
	addFile := func(f string) {
		key := strings.ToLower(f)
		if len(f) < 3 || len(f) > 120 || fileSeen[key] || !strings.ContainsAny(f, "./") {
			return
		}
		if strings.Count(f, "/") == 1 && strings.HasPrefix(f, "/") && !strings.Contains(f, ".") {
			return // a command (/add) or a unit (/op), not a file
		}
		fileSeen[key] = true
		files = append(files, f)
	}
	var units []sumUnit
	for ii, it := range items {
		for _, p := range it.Parts {
			if p.Type == model.PartToolCall && p.ToolName != "" {
				if toolCount[p.ToolName] == 0 {
					tools = append(tools, p.ToolName)
				}
				toolCount[p.ToolName]++
				for _, f := range sumFilesIn(sumInputText(p.Input)) {
					addFile(f)
				}
			}
		}
		content := sumTag.ReplaceAllString(it.Content, " ")
		for _, f := range sumFilesIn(content) {
			addFile(f)
		}
		role := string(it.Role)
		if it.Synthetic && it.OpType == model.OpDigest {
			role = "summary"
		}
		first := true
		for _, sent := range sumSentences(content) {
			u := sumUnit{pos: len(units), item: ii, role: role, text: sent}
			u.words = sumWords(sent)
			if len(u.words) < 2 || !sumProse(sent) {
				continue
			}
			u.score = sumBonus(sent, u.words, role, first)
			first = false
			units = append(units, u)
		}
	}
	slices.SortStableFunc(tools, func(a, b string) int { return toolCount[b] - toolCount[a] })
	files = sumDedupeFiles(files)

	var head strings.Builder
	head.WriteString(about)
	head.WriteString(".")
	if len(tools) > 0 {
		head.WriteString("\nTools: ")
		head.WriteString(sumList(tools, 8, func(t string) string {
			if toolCount[t] > 1 {
				return fmt.Sprintf("%s ×%d", t, toolCount[t])
			}
			return t
		}))
		head.WriteString(".")
	}
	if len(files) > 0 {
		head.WriteString("\nFiles: ")
		head.WriteString(sumList(files, 6, func(f string) string { return f }))
		head.WriteString(".")
	}
	text := head.String()
	used := tokens.Count(text)
	if used > budget {
		return sumCutTokens(text, budget)
	}

	// Rarity: a word in few sentences says more than one in many.
	df := map[string]int{}
	for _, u := range units {
		for _, w := range u.words {
			df[w]++
		}
	}
	n := float64(len(units))
	for k := range units {
		u := &units[k]
		idf := 0.0
		for _, w := range u.words {
			idf += math.Log(1 + n/float64(df[w]))
		}
		u.score += idf / math.Sqrt(float64(len(u.words)))
		if u.role == string(model.RoleTool) {
			u.score *= 0.5
		}
		u.cost = tokens.Count(u.text) + 4
	}
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case units[a].score > units[b].score:
			return -1
		case units[a].score < units[b].score:
			return 1
		}
		return a - b
	})
	var picked []int
	perItem := map[int]int{}
	for _, k := range order {
		u := &units[k]
		if used+u.cost > budget || perItem[u.item] == sumPerItem {
			continue
		}
		if slices.ContainsFunc(picked, func(p int) bool { return sumSimilar(units[p].words, u.words) }) {
			continue
		}
		picked = append(picked, k)
		perItem[u.item]++
		used += u.cost
	}
	slices.Sort(picked)
	var b strings.Builder
	b.WriteString(text)
	if len(picked) > 0 {
		b.WriteString("\n")
	}
	for _, k := range picked {
		fmt.Fprintf(&b, "\n- %s: %s", units[k].role, units[k].text)
	}
	return b.String()
}

// sumFilesIn finds the file names and paths among a text's words.
// Looking at words, not running a pattern over the text, keeps this
// linear: most words have neither a dot nor a slash.
func sumFilesIn(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		if !strings.ContainsAny(w, "./") || strings.Contains(w, "://") {
			continue
		}
		w = strings.TrimLeft(w, "([{<\"'`")
		w = strings.TrimRight(w, ".,;:!?)]}>\"'`")
		if sumFileRE.MatchString(w) {
			out = append(out, w)
		}
	}
	return out
}

// sumInputText is the text of a tool call's input: its JSON's strings.
func sumInputText(input json.RawMessage) string {
	var v any
	if json.Unmarshal(input, &v) != nil {
		return string(input)
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteString(" ")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys) // maps have no order; summaries must
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return b.String()
}

// sumDedupeFiles drops bare file names that a listed path ends in.
func sumDedupeFiles(files []string) []string {
	bases := map[string]bool{}
	for _, f := range files {
		if i := strings.LastIndexByte(strings.TrimSuffix(f, "/"), '/'); i >= 0 {
			bases[strings.ToLower(f[i+1:])] = true
		}
	}
	out := files[:0]
	for _, f := range files {
		if !strings.Contains(f, "/") && bases[strings.ToLower(f)] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// sumSentences splits a message's text into sentences, leaving out code
// blocks, tool calls (their names and files are listed apart) and
// markup, and shortening very long ones.
func sumSentences(content string) []string {
	content = sumCodeFence.ReplaceAllString(content, "\n")
	var out []string
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "[tool call ") || strings.HasPrefix(line, "|") || strings.HasPrefix(line, "    ") {
			continue
		}
		line = strings.TrimPrefix(line, "[tool result] ")
		line = strings.TrimPrefix(line, "[tool error] ")
		line = strings.TrimLeft(line, "#>*-+ ")
		if i := strings.IndexFunc(line, func(r rune) bool { return !unicode.IsDigit(r) }); i > 0 && strings.HasPrefix(line[i:], ". ") {
			line = line[i+2:] // a numbered list item
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				// A dot after a one-letter word or inside e.g. is no end.
				if c == '.' && i >= 2 && line[i-2] == ' ' {
					continue
				}
				out = append(out, sumShorten(strings.TrimSpace(line[start:i+1])))
				start = i + 1
			}
		}
		if rest := strings.TrimSpace(line[start:]); rest != "" {
			out = append(out, sumShorten(rest))
		}
	}
	return out
}

// sumProse reports whether a sentence reads as prose rather than data
// (JSON, logs, tables): mostly letters and spaces.
func sumProse(s string) bool {
	if strings.Contains(s, `{"`) || strings.Contains(s, `":`) || strings.Count(s, `"`) >= 6 {
		return false // JSON
	}
	if strings.Count(s, "{")+strings.Count(s, "}")+strings.Count(s, ";")+strings.Count(s, ":=") >= 2 {
		return false // code
	}
	prose, all := 0, 0
	for _, r := range s {
		all++
		if unicode.IsLetter(r) || r == ' ' {
			prose++
		}
	}
	return all > 0 && float64(prose) >= 0.75*float64(all)
}

// sumShorten cuts a sentence to 40 words.
func sumShorten(s string) string {
	f := strings.Fields(s)
	if len(f) <= 40 {
		return s
	}
	return strings.Join(f[:40], " ") + " …"
}

// sumWords are a sentence's distinct content words, lower-cased.
func sumWords(s string) []string {
	var out []string
	for _, w := range sumWordRE.FindAllString(strings.ToLower(s), -1) {
		if utf8.RuneCountInString(w) < 3 || sumStop[w] || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// sumBonus scores what marks a sentence as worth keeping besides its
// words' rarity.
func sumBonus(s string, words []string, role string, first bool) float64 {
	bonus := 0.0
	cues := 0
	for _, w := range words {
		if sumCues[w] {
			cues++
		}
	}
	bonus += float64(min(cues, 3))
	if len(sumFilesIn(s)) > 0 {
		bonus += 0.5
	}
	if strings.ContainsAny(s, "0123456789") {
		bonus += 0.5
	}
	if strings.Contains(s, "`") {
		bonus += 0.3
	}
	switch role {
	case string(model.RoleUser):
		bonus += 0.5
		if strings.HasSuffix(s, "?") {
			bonus += 0.3
		}
	}
	if first {
		bonus += 0.3
	}
	if len(words) < 4 {
		bonus -= 1
	}
	return bonus
}

// sumSimilar reports whether two sentences share most of their words.
func sumSimilar(a, b []string) bool {
	common := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			common++
		}
	}
	union := len(a) + len(b) - common
	return union > 0 && float64(common)/float64(union) >= 0.7
}

// sumList joins at most n names, saying how many more there are.
func sumList(xs []string, n int, show func(string) string) string {
	parts := make([]string, 0, min(len(xs), n)+1)
	for i, x := range xs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(xs)-n))
			break
		}
		parts = append(parts, show(x))
	}
	return strings.Join(parts, ", ")
}

// sumCutTokens shortens text, word by word, to at most budget tokens.
func sumCutTokens(text string, budget int) string {
	words := strings.Fields(text)
	for len(words) > 0 {
		s := strings.Join(words, " ") + " …"
		if tokens.Count(s) <= budget {
			return s
		}
		words = words[:len(words)*9/10]
	}
	return ""
}
