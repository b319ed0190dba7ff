package proxy

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"

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
