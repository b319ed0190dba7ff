package proxy

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"

	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
)

// What a request cost at the provider, and whether it kept the prompt
// cache's prefix: the answer's usage (the Messages API's in message_start
// and message_delta, Chat Completions' and the Responses API's at the
// end) is recorded with the session's proxy stats; and the thread each
// request sends is checked against the previous one's, which it should
// continue byte for byte between compactions.

// usageOf is a provider's usage, as the three APIs say it.
type usageOf struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CacheCreationTokens int `json:"cache_creation_input_tokens"`
	CacheReadTokens     int `json:"cache_read_input_tokens"`
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptDetails       struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// addUsage takes into u what an answer or one of its events says of
// its usage (the latest count of each kind wins: a stream counts on).
func addUsage(u *ops.Usage, data []byte) {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return
	}
	var ev struct {
		Usage    *usageOf                 `json:"usage"`
		Message  struct{ Usage *usageOf } `json:"message"`
		Response struct{ Usage *usageOf } `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	for _, x := range []*usageOf{ev.Usage, ev.Message.Usage, ev.Response.Usage} {
		if x == nil {
			continue
		}
		cached := max(x.CacheReadTokens, x.PromptDetails.CachedTokens, x.InputDetails.CachedTokens)
		input := x.InputTokens
		if x.PromptTokens > 0 {
			input = x.PromptTokens - cached // OpenAI counts the cached in the prompt
		} else if x.InputDetails.CachedTokens > 0 {
			input -= x.InputDetails.CachedTokens // so does the Responses API
		}
		u.Input = max(u.Input, input)
		u.CacheRead = max(u.CacheRead, cached)
		u.CacheWrite = max(u.CacheWrite, x.CacheCreationTokens)
		u.Output = max(u.Output, x.OutputTokens, x.CompletionTokens)
	}
}

// prefixes keeps, for each session, the hash and length of the thread
// its last request sent (its list without the closing bracket).
type prefixes struct {
	mu   sync.Mutex
	seed maphash.Seed
	last map[string]sentPrefix
}

type sentPrefix struct {
	n    int
	hash uint64
}

// sent records the thread list a request of session sid sent, and
// reports whether it broke the previous one's prefix.
func (p *prefixes) sent(sid string, list []byte) (broke bool) {
	if sid == "" || len(list) < 2 {
		return false
	}
	body := list[:len(list)-1] // without "]": the next one goes on after it
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.seed, p.last = maphash.MakeSeed(), map[string]sentPrefix{}
	}
	prev, seen := p.last[sid]
	if seen {
		broke = len(body) < prev.n || maphash.Bytes(p.seed, body[:prev.n]) != prev.hash
	}
	p.last[sid] = sentPrefix{n: len(body), hash: maphash.Bytes(p.seed, body)}
	return broke
}

// threadParts is the thread a request sends by part: the summaries and
// other items of snap's view (the stored messages' tokens from its
// heads) and the request's messages past the stored ones (msgs), as
// turns or tool outputs.
func threadParts(snap ops.Snapshot, msgs []ops.CallerMessage) ops.SentParts {
	var p ops.SentParts
	add := func(m *ops.CallerMessage, n int) {
		for _, part := range m.Parts {
			if part.Type == model.PartToolResult {
				p.ToolOutputs += n
				return
			}
		}
		p.Turns += n
	}
	if v := snap.View; v != nil {
		for _, it := range v.Items {
			switch {
			case it.Synth >= 0 && v.Synth[it.Synth].Summary:
				p.Summaries += v.Synth[it.Synth].Tokens
			case it.Synth >= 0:
				p.Turns += v.Synth[it.Synth].Tokens
			case it.Seq > 0 && int(it.Seq) <= len(msgs) && int(it.Seq) <= len(snap.Heads):
				add(&msgs[it.Seq-1], int(snap.Heads[it.Seq-1].Tokens))
			}
		}
	}
	for k := snap.Info.MessageCount; k < len(msgs); k++ {
		add(&msgs[k], msgs[k].Message.Tokens)
	}
	return p
}

// fieldTokens counts the tokens of a body's field (its system prompt,
// its tools), once for each value: a client sends the same ones with
// every request.
type fieldTokens struct {
	mu     sync.Mutex
	seed   maphash.Seed
	counts map[uint64]int
}

func (f *fieldTokens) count(raw []byte) int {
	if len(raw) == 0 {
		return 0
	}
	f.mu.Lock()
	if f.counts == nil {
		f.seed, f.counts = maphash.MakeSeed(), map[uint64]int{}
	}
	h := maphash.Bytes(f.seed, raw)
	n, ok := f.counts[h]
	f.mu.Unlock()
	if ok {
		return n
	}
	n = tokens.Count(string(raw))
	f.mu.Lock()
	if len(f.counts) > 4096 {
		clear(f.counts)
	}
	f.counts[h] = n
	f.mu.Unlock()
	return n
}
