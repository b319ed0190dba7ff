package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/memory"
)

// replayThread reads a real Claude Code transcript
// (formats/testdata/claude-code/spotter_long_session.jsonl, see its
// SOURCES.md) as the Messages API messages its requests sent: its
// records' messages in order, an assistant's blocks (one record each)
// put back together.
func replayThread(b *testing.B) []json.RawMessage {
	f, err := os.Open("../../formats/testdata/claude-code/spotter_long_session.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	type message struct {
		ID      string            `json:"id,omitempty"`
		Role    string            `json:"role"`
		Content json.RawMessage   `json:"content"`
		Blocks  []json.RawMessage `json:"-"`
	}
	var msgs []*message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			IsSidechain bool     `json:"isSidechain"`
			Message     *message `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Message == nil || r.IsSidechain || (r.Message.Role != "user" && r.Message.Role != "assistant") {
			continue
		}
		m := r.Message
		var blocks []json.RawMessage
		if json.Unmarshal(m.Content, &blocks) != nil {
			blocks = []json.RawMessage{mustText(m.Content)}
		}
		if n := len(msgs); n > 0 && m.Role == "assistant" && msgs[n-1].Role == "assistant" && m.ID != "" && msgs[n-1].ID == m.ID {
			msgs[n-1].Blocks = append(msgs[n-1].Blocks, blocks...)
			continue
		}
		m.Blocks = blocks
		msgs = append(msgs, m)
	}
	var out []json.RawMessage
	for _, m := range msgs {
		content, _ := json.Marshal(m.Blocks)
		raw, _ := json.Marshal(struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}{m.Role, content})
		out = append(out, raw)
	}
	return out
}

func mustText(s json.RawMessage) json.RawMessage {
	var text string
	_ = json.Unmarshal(s, &text)
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return b
}

// BenchmarkProxyReplay replays a real Claude Code session through the
// proxy: each of its model requests (the conversation up to an answer),
// answered by the stand-in with the answer the transcript holds, without
// a memory policy and with one (the seed's tiers and a 20,000-token
// budget). It reports the tokens sent upstream in all, the prefix
// breaks, and weft's median time per request.
//
//	go test ./ops/proxy -run XXX -bench ProxyReplay -benchtime 1x
func BenchmarkProxyReplay(b *testing.B) {
	thread := replayThread(b)
	for _, c := range []string{"no policy", "policy"} {
		b.Run(strings.ReplaceAll(c, " ", "-"), func(b *testing.B) {
			for range b.N {
				rig := newProxyRig(b, rigOptions{Memory: true})
				if c == "policy" {
					p := model.DefaultMemoryPolicy()
					p.BudgetTokens = 20_000
					if err := rig.svc.SetDefaultPolicy(ops.SettingMemoryProxied, &p); err != nil {
						b.Fatal(err)
					}
				}
				sent, requests, breaks, over := 0, 0, 0, 0
				var durs []time.Duration
				var sid string
				for i := 1; i < len(thread); i++ {
					var m struct{ Role string }
					_ = json.Unmarshal(thread[i], &m)
					if m.Role != "assistant" {
						continue
					}
					answer := thread[i]
					rig.up.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
						var a struct {
							Content json.RawMessage `json:"content"`
						}
						_ = json.Unmarshal(answer, &a)
						writeJSON(w, fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":"stand-in","content":%s,"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`, i, a.Content))
					})
					parts := make([]string, i)
					for k := range i {
						parts[k] = string(thread[k])
					}
					start := time.Now()
					resp, _ := rig.post("/v1/messages", anBody(false, parts...), anHeaders)
					durs = append(durs, time.Since(start))
					sid = resp.Header.Get(SessionHeader)
					rig.proxy.background.Wait()
					memory.Settle(rig.svc)
					if st := rig.svc.ProxyStatsOf(sid); st != nil {
						sent += st.SentTokens
						breaks = st.PrefixBreaks
						if st.SentTokens > 20_000 {
							over++
						}
					}
					requests++
				}
				slices.Sort(durs)
				b.ReportMetric(float64(sent), "tokens-sent")
				b.ReportMetric(float64(breaks), "prefix-breaks")
				b.ReportMetric(float64(requests), "requests")
				b.ReportMetric(float64(over), "over-20k")
				b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "ms-median")
				b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "ms-p90")
				if n := rig.sessions(); n != 1 {
					b.Errorf("%d sessions: the replay forked", n)
				}
			}
		})
	}
}
