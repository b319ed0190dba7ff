package reads

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"weft/ops"
	"weft/ops/search"

	"weft/formats"
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

// MaxMaxTokens is the largest budget a read takes; 0 asks for no limit.
const MaxMaxTokens = 10_000_000

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
	// ResultTokens is what the result's JSON counts, in o200k tokens,
	// as weft sends it (compact; the text of an MCP tool result).
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

// Cap is what a read called without max_tokens fits in, for the caller
// that called it: Tokens is the budget it is given, Bytes (0: none) a
// cap on its JSON's size, which some clients hold results to.
type Cap struct {
	Tokens, Bytes int
}

type capKey struct{}

// WithCap is ctx for a caller whose reads, called without max_tokens,
// fit c.
func WithCap(ctx context.Context, c Cap) context.Context {
	return context.WithValue(ctx, capKey{}, c)
}

// CapFrom is the cap of ctx's caller, if it has one.
func CapFrom(ctx context.Context) (Cap, bool) {
	c, ok := ctx.Value(capKey{}).(Cap)
	return c, ok
}

// String writes c as ParseCap reads it: "tokens=N bytes=M".
func (c Cap) String() string { return fmt.Sprintf("tokens=%d bytes=%d", c.Tokens, c.Bytes) }

// ParseCap reads a Cap as String writes it; tokens must be a budget a
// read takes.
func ParseCap(s string) (Cap, error) {
	var c Cap
	if _, err := fmt.Sscanf(s, "tokens=%d bytes=%d", &c.Tokens, &c.Bytes); err != nil {
		return Cap{}, fmt.Errorf("a result cap is tokens=N bytes=M: %w", err)
	}
	if c.Tokens < MinMaxTokens || c.Tokens > MaxMaxTokens || c.Bytes < 0 {
		return Cap{}, fmt.Errorf("a result cap of %d tokens and %d bytes: tokens must be %d to %d, bytes 0 or more", c.Tokens, c.Bytes, MinMaxTokens, MaxMaxTokens)
	}
	return c, nil
}

// Weigh is what a result of count tokens and size bytes of JSON weighs
// against a budget of tokens when its bytes are held to capBytes (0:
// not held): its tokens, or its bytes in the budget's units if that is
// more. It is over the budget exactly when either is over its cap.
func Weigh(count, size, budget, capBytes int) int {
	if capBytes <= 0 {
		return count
	}
	return max(count, int((int64(size)*int64(budget)+int64(capBytes)-1)/int64(capBytes)))
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
		return 0, ops.Invalidf("max_tokens %d is too small for a result: give %d or more (default %d; 0 for no limit)", *p, MinMaxTokens, DefaultMaxTokens)
	}
	if *p > MaxMaxTokens {
		return 0, ops.Invalidf("max_tokens %d is more than %d, more than any model takes: give less, or 0 for no limit", *p, MaxMaxTokens)
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
const unlimited = 1 << (30 + 10*(^uint(0)>>63)) // 2^40 tokens (2^30 where int has 32 bits)

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

// takeShaped takes an item whose bodies shape cuts to a cap, returning
// what it then costs and whether it cut anything: at the packer's cap,
// and for the first item of a result, which is given cut rather than not
// at all, at smaller caps until it fits what is left. A first item that
// does not fit even then is taken anyway: every page gives something,
// so a cursor always moves on.
func (p *packer) takeShaped(shape func(capBody int) (cost int, cut bool)) bool {
	cost, cut := shape(p.capBody)
	if cost+1 > p.room && p.taken == 0 && !p.full {
		capBody := p.capBody
		for capBody > minCut && cost+1 > p.room {
			// Scale the cap by how far over the cost is; what the bodies
			// do not count (fields, escapes) makes it an estimate, so
			// try again until it fits.
			scaled := int(int64(capBody) * int64(max(p.room, 1)) * 9 / 10 / int64(max(cost, 1)))
			capBody = max(min(scaled, capBody*9/10), minCut)
			cost, cut = shape(capBody)
		}
		if cost+1 > p.room {
			p.room -= cost + 1
			p.taken++
			if cut {
				p.cut++
			}
			return true
		}
	}
	if !p.take(cost) {
		return false
	}
	if cut {
		p.cut++
	}
	return true
}

// minCut is the least a body is cut to.
const minCut = 16

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

// countJSON counts the tokens of a value's JSON as the faces encode it
// (formats.Marshal: compact, <, > and & as they are), for the small
// values a result is framed with.
func countJSON(v any) int {
	return tokens.Count(string(formats.Marshal(v)))
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
	at = search.RuneBack(s, min(max(at, 0), len(s)))
	// End at a line when the last fifth of what is kept has one.
	if nl := strings.LastIndexByte(s[:at], '\n'); nl > 0 && nl >= at*4/5 {
		at = nl + 1
	}
	head = s[:at]
	return head, utf8.RuneCountInString(head), utf8.RuneCountInString(s[at:])
}

// fitPart gives the Fit of a result that embeds one, for fitTo.
func (f *Fit) fitPart() *Fit { return f }

// fitted is a read result (a pointer to one): one that embeds a Fit.
type fitted interface{ fitPart() *Fit }

// budgeted is a read's arguments (a pointer to them): they carry its
// max_tokens.
type budgeted interface{ budget() **int }

// fitTo makes a read tool's result honest about its size and as full as
// its budget lets. The packing plans with estimates of what items count
// (the bodies' stored counts, their fields' lengths); then the result's
// JSON, as the faces send it, is counted exactly: that count is
// result_tokens. A result within its budget that is complete, or fills
// nine tenths of it, is given as it is: one pass. Otherwise (over the
// budget, or well under it with something left out or cut) the read
// runs again with the budget it packs to scaled by how far the estimate
// was off, then halfway between the largest that fit and the least that
// did not, a few times at most. A result over its budget is given only
// when none fits (a budget smaller than the result's frame).
//
// Its type parameters say what a read must be: arguments with a budget,
// a result with a Fit. A read without either does not compile.
func fitTo[A any, PA interface {
	*A
	budgeted
}, R any, PR interface {
	*R
	fitted
}](fn func(*ops.Service, context.Context, A) (R, error)) func(*ops.Service, context.Context, A) (R, error) {
	return func(s *ops.Service, ctx context.Context, a A) (R, error) {
		field := PA(&a).budget()
		// A read called without max_tokens fits its caller's cap: its
		// tokens are the budget asked for, its bytes, if any, held too.
		capBytes := 0
		if *field == nil {
			if c, ok := CapFrom(ctx); ok {
				*field = &c.Tokens
				capBytes = c.Bytes
			}
		}
		best, err := fn(s, ctx, a)
		if err != nil {
			return best, err
		}
		fitOf := func(r *R) *Fit { return PR(r).fitPart() }
		budget := fitOf(&best).MaxTokens
		// weigh settles a result's result_tokens and says what it
		// weighs against the budget: its tokens, or, when its bytes are
		// held to a cap, its bytes in the budget's units if that is more.
		weigh := func(r *R) (weight, count int) {
			count, size := settleSized(r, fitOf(r))
			return Weigh(count, size, budget, capBytes), count
		}
		bestN, bestTokens := weigh(&best)
		if budget == NoLimit {
			return best, nil
		}
		scale := func(ask, n int) int { return int(float64(ask) * float64(budget) * 0.95 / float64(max(n, 1))) }
		fits := bestN <= budget
		// lo is the largest budget packed to that is known to fit, hi
		// the least known to go over; loN and hiN what they gave.
		lo, hi, loN, hiN := 0, 0, 0, 0
		if fits {
			lo, loN = budget, bestN
		} else {
			hi, hiN = budget, bestN
		}
		for range 4 {
			if fits && (fitOf(&best).Complete || bestN >= budget*9/10) {
				break
			}
			var ask int
			switch {
			case hi == 0:
				ask = min(scale(lo, loN), 2*budget)
			case lo == 0:
				ask = scale(hi, hiN)
			default:
				ask = lo + (hi-lo)/2
			}
			ask = max(ask, MinMaxTokens)
			if (hi != 0 && ask >= hi) || (lo != 0 && ask <= lo) {
				break // nothing between what fits and what does not
			}
			*field = &ask
			again, err := fn(s, ctx, a)
			if err != nil {
				return again, err
			}
			n, count := weigh(&again)
			if n <= budget {
				lo, loN = ask, n
				if !fits || n >= bestN {
					best, bestN, bestTokens, fits = again, n, count, true
				}
			} else {
				hi, hiN = ask, n
				if !fits {
					best, bestN, bestTokens = again, n, count
				}
			}
		}
		// A result packed to another budget says the one asked for. Its
		// JSON then differs only in max_tokens' digits, pieces of their
		// own as result_tokens' are (see settle): it is not counted again.
		if f := fitOf(&best); f.MaxTokens != budget {
			rest := bestTokens - digitTokens(f.ResultTokens) - digitTokens(f.MaxTokens) + digitTokens(budget)
			f.MaxTokens = budget
			settleDigits(&f.ResultTokens, rest)
		}
		return best, nil
	}
}

// SettleTokens sets *n, the result_tokens field of v (a pointer to a
// result, a resource's included), to the exact count of v's JSON as the
// faces send it, and returns it.
//
// The JSON is counted once. The count splits text as o200k does and sums
// the pieces, and result_tokens' digits are pieces of their own (between
// ":" and "," or "}"), so the count with another value differs only by
// those digits' tokens: result_tokens settles on its own digits without
// counting the whole result again.
func SettleTokens(v any, n *int) int {
	tokens, _ := settleTokens(v, n)
	return tokens
}

// settleSized sets a result's result_tokens to the exact count of its
// JSON (SettleTokens) and returns it, with the JSON's size in bytes (as
// it was counted: result_tokens' digits may since differ by a few).
func settleSized(res any, f *Fit) (count, size int) { return settleTokens(res, &f.ResultTokens) }

// settleTokens is SettleTokens, also giving the size of v's JSON.
func settleTokens(v any, n *int) (count, size int) {
	*n = max(*n, 0) // a sign would join the ":" before it
	b := formats.Marshal(v)
	return settleDigits(n, tokens.Count(string(b))-digitTokens(*n)), len(b)
}

// settleDigits sets *n, a result_tokens, to rest, what the result's JSON
// counts without result_tokens' digits, and those digits, and returns it.
func settleDigits(n *int, rest int) int {
	for range 3 {
		c := rest + digitTokens(*n)
		if c == *n {
			break
		}
		*n = c // its own digits count too: count again
	}
	return *n
}

// digitTokens is what n's decimal digits count in JSON.
func digitTokens(n int) int {
	return tokens.Count(strconv.Itoa(n))
}
