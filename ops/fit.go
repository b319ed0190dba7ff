package ops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"weft/internal/tokens"
)

// Read results fit a budget of tokens. An agent's client caps what one
// tool result may hold (Claude Code at about 25,000 tokens), and a thread
// with long tool outputs is many times that: every read tool takes
// max_tokens, fills it with what matters most to the question asked
// (the latest turns, the first of a range, the best matches), cuts long
// bodies with a marker that says how to read on, and says what it left
// out and how to get it.

// DefaultMaxTokens is a read result's budget when max_tokens is not
// given: with o200k counts, a result stays under a 25k-token client cap
// even for a tokenizer that counts a fifth more.
const DefaultMaxTokens = 16000

// MinMaxTokens is the least budget a read takes: below it there is no
// room for a result's own fields and one cut message.
const MinMaxTokens = 500

const (
	// minBody is the least a body is cut to while others are whole: a
	// cut body still shows its first lines.
	minBody = 200
	// fitReserve is kept for the fit fields themselves (the cursor, the
	// words saying how to read on).
	fitReserve = 150
)

// Fit says how a read result was fitted to its budget: what it counts,
// what it left out or cut, and how to get the rest.
type Fit struct {
	// MaxTokens is the budget the result was fitted to.
	MaxTokens int `json:"max_tokens"`
	// ResultTokens is what the result's JSON counts, o200k tokens,
	// estimated from the counts of what it holds; never less than a count
	// of the JSON sent, rarely a tenth more.
	ResultTokens int `json:"result_tokens"`
	// Complete is true when nothing was left out or cut.
	Complete bool `json:"complete"`
	// Omitted counts the items the result would have given but left out
	// for the budget; Cut the bodies cut short, each ending in a marker
	// that says how to read the rest.
	Omitted int `json:"omitted"`
	Cut     int `json:"cut"`
	// NextCursor, passed back as cursor with the same arguments, gives
	// what was left out.
	NextCursor string `json:"next_cursor,omitempty"`
	// Next says in words how to get what was left out.
	Next string `json:"next,omitempty"`
}

// NoLimit, as a read's max_tokens, asks for everything: for callers in
// this process and scripts that page themselves (the TUI, weft ls and
// show), not for agents, whose clients cap what a result may hold.
const NoLimit = 0

// budgetArg reads a max_tokens argument: the default when it is not
// given, NoLimit for 0.
func budgetArg(p *int) (int, error) {
	if p == nil {
		return DefaultMaxTokens, nil
	}
	if *p < 0 || (*p > 0 && *p < MinMaxTokens) {
		return 0, invalidf("max_tokens %d is too small for a result: give %d or more (default %d; 0 for no limit)", *p, MinMaxTokens, DefaultMaxTokens)
	}
	return *p, nil
}

// packer fills a result's lists within a budget, in the order of what
// matters most, and keeps the counts Fit reports.
type packer struct {
	max      int // the budget
	envelope int // tokens of the result without its items
	room     int // tokens left for items
	capBody  int // a body longer than this many tokens is cut to it
	taken    int
	omitted  int
	cut      int
	full     bool // an item did not fit: the rest are left out
}

// newPacker starts a packer for a result whose frame (lists empty)
// counts envelope tokens, for candidates whose bodies count about
// bodies[i] tokens and whose other fields about metas[i]: the body cap
// is the largest that lets them all fit, but not under minBody.
func newPacker(max, envelope int, bodies, metas []int) *packer {
	if max == NoLimit {
		p := &packer{envelope: envelope, room: unlimited, capBody: unlimited}
		return p
	}
	p := &packer{max: max, envelope: envelope, room: max - envelope - fitReserve}
	p.capBody = waterLevel(bodies, metas, p.room)
	return p
}

// unlimited is the room and cap of a read with no limit.
const unlimited = 1 << 40

// cutMarkerTokens is about what a cut body's marker counts.
const cutMarkerTokens = 40

// waterLevel is the largest cap such that the items, their bodies cut to
// it, fit in room; no less than minBody (when even that does not fit,
// the items are taken in order until the room is gone).
func waterLevel(bodies, metas []int, room int) int {
	total := func(c int) int {
		n := 0
		for i, b := range bodies {
			n += metas[i] + 1
			if b > c {
				n += c + cutMarkerTokens
			} else {
				n += b
			}
		}
		return n
	}
	hi := minBody
	for _, b := range bodies {
		hi = max(hi, b)
	}
	if total(hi) <= room {
		return hi
	}
	lo := minBody
	if total(lo) > room {
		return lo
	}
	for lo < hi-1 {
		mid := lo + (hi-lo)/2
		if total(mid) <= room {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// take accounts for an item of cost tokens: false when it does not fit,
// and then no later item is taken either.
func (p *packer) take(cost int) bool {
	if p.full || cost+1 > p.room {
		p.full = true
		p.omitted++
		return false
	}
	p.room -= cost + 1
	p.taken++
	return true
}

// skip counts an item left out without trying it.
func (p *packer) skip(n int) { p.omitted += n }

// squeeze is the cap for a body that must fit in what is left, beside
// meta tokens of other fields: for the first item of a result, which is
// given cut rather than not at all.
func (p *packer) squeeze(meta int) int {
	return max(p.room-meta-cutMarkerTokens-2, 16)
}

// fit fills in a result's Fit: the counts, the cursor (when something
// was left out) and the words saying how to get it.
func (p *packer) fit(cur *readCursor, next string) Fit {
	f := Fit{MaxTokens: p.max, Omitted: p.omitted, Cut: p.cut, Complete: p.omitted == 0 && p.cut == 0}
	if p.omitted > 0 && cur != nil {
		f.NextCursor = cur.encode()
	}
	if p.omitted > 0 {
		f.Next = next
	}
	used := p.max - fitReserve - p.room
	if p.max == NoLimit {
		used = p.envelope + unlimited - p.room
	}
	f.ResultTokens = used + countJSON(f) - countJSON(Fit{})
	return f
}

// countJSON counts the tokens of a value's JSON, for the small values a
// result is framed with.
func countJSON(v any) int {
	b, err := encodeJSON(v)
	if err != nil {
		return 0
	}
	return tokens.Count(string(b))
}

// encodeJSON encodes as the faces do: compact, <, > and & as they are.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// strTokens estimates the tokens of s as a JSON string, from n, the
// tokens of s itself: every character JSON escapes can add one (an
// escape sequence \u001b a few), and the quotes.
func strTokens(s string, n int) int {
	if s == "" {
		return 1
	}
	esc := strings.Count(s, "\n") + strings.Count(s, `"`) + strings.Count(s, `\`) + strings.Count(s, "\t") + strings.Count(s, "\r") + 4*strings.Count(s, "\x1b")
	return n + esc + 2
}

// textTokens is the tokens of a text whose count n was stored with it;
// a count that cannot be right for the text's length (a client may give
// its own) is made again.
func textTokens(s string, n int) int {
	if n <= 0 || n*12 < len(s) || n > len(s)+2 {
		return tokens.Count(s)
	}
	return n
}

// cutText cuts s, which counts about n tokens, to about keep tokens,
// at a line end near there when one is close, and reports the cut as
// the characters (runes) kept and those left out.
func cutText(s string, n, keep int) (head string, kept, rest int) {
	if keep >= n || len(s) == 0 {
		return s, utf8.RuneCountInString(s), 0
	}
	at := int(int64(len(s)) * int64(max(keep, 0)) / int64(max(n, 1)))
	at = min(max(at, 0), len(s))
	for at > 0 && at < len(s) && !utf8.RuneStart(s[at]) {
		at--
	}
	// End at a line when the last fifth of what is kept has one.
	if nl := strings.LastIndexByte(s[:at], '\n'); nl > 0 && nl >= at*4/5 {
		at = nl + 1
	}
	head = s[:at]
	return head, utf8.RuneCountInString(head), utf8.RuneCountInString(s[at:])
}

// thousands writes n with commas between thousands: 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
