package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// codexThread is a Codex CLI conversation of n input items: its
// instructions, the user's question, then rounds of reasoning (with
// encrypted content), a function call and its output, with text the
// size such conversations have.
func codexThread(n int) []string {
	items := []string{rsDev, rsEnv, `{"type":"message","role":"user","content":[{"type":"input_text","text":"Find why the rate limiter lets bursts through, and fix it."}]}`}
	for k := 0; len(items) < n; k++ {
		switch len(items) % 3 {
		case 0:
			items = append(items, fmt.Sprintf(`{"type":"reasoning","id":"rs_%06d","summary":[{"type":"summary_text","text":%q}],"encrypted_content":%q}`,
				k, fmt.Sprintf("Step %d: %s", k, strings.Repeat("I will look at the bucket refill and the clock it reads. ", 3)), strings.Repeat("gAAAAB", 64)))
		case 1:
			items = append(items, fmt.Sprintf(`{"type":"function_call","id":"fc_%06d","call_id":"call_%06d","name":"exec_command","arguments":%q}`, k, k, fmt.Sprintf(`{"cmd":"sed -n 1,200p src/limiter/bucket_%d.go"}`, k)))
		default:
			output := fmt.Sprintf("%d: %s", k, strings.Repeat("func (b *Bucket) refill(now time.Time) { b.tokens += rate * now.Sub(b.last) }\n", 12))
			items = append(items, fmt.Sprintf(`{"type":"function_call_output","call_id":"call_%06d","output":%q}`, k-1, output))
		}
	}
	return items
}

// BenchmarkProxyResponses2000 is BenchmarkProxyRequest2000 for the
// Responses API: a 2,000-item Codex conversation with one new item each
// time, straight to the stand-in, through weft with no operation, and
// through weft with a digest over the first 1,500 items (the request's
// own items sent byte for byte around the summary).
//
//	go test ./ops/proxy -run XXX -bench ProxyResponses2000 -benchtime 200x
func BenchmarkProxyResponses2000(b *testing.B) {
	for _, c := range []string{"direct", "unchanged", "digest"} {
		b.Run(c, func(b *testing.B) {
			rig := newProxyRig(b, rigOptions{})
			rig.up.setAnswer(rsAnswer("", "Done.", nil))
			answer := string(rsItems("", "Done.", nil)[0])
			growing(b, rig, c, "/v1/responses", codexThread(2000), 2, func(items ...string) string { return rsBody(false, items...) }, func(i int) []string {
				return []string{answer, fmt.Sprintf(`{"type":"message","role":"user","content":[{"type":"input_text","text":"next %d"}]}`, i)}
			})
		})
	}
}
