package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"weft/model"
)

// A proxied message's text is stored once: the importers keep it as the
// message's content, as its parts' text and in the block the client
// sent, and the store packs the last two over the first. Megabytes
// proxied grow the file by about their size (bbolt's pages and the
// room it keeps ahead included), not three times it, in each API's
// shape, as a user's text and as a tool's result.
func TestProxyStoresAMessagesTextOnce(t *testing.T) {
	if testing.Short() {
		// 36 MB through the proxy: a minute under the race detector on
		// two cores; the full run (go test ./...) holds it.
		t.Skip("a size measure: not with -short")
	}
	const (
		size     = 2 << 20
		requests = 6
		// maxGrowth bounds the file's growth per byte of text proxied:
		// 1.01 measured for every API, a user's text and a tool's
		// result alike (1.59 while the file grew by bbolt's own steps
		// and a large record's chunk took five pages for four; 4.77,
		// 3.36 and 4.77 for Messages, Chat Completions and Responses
		// before the text was stored once).
		maxGrowth = 1.25
	)
	line := "func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" * now.Sub(b.last) // <a & b> café\n}\n"
	base := strings.Repeat(line, size/len(line)+1)[:size]
	// quote writes a string as a JavaScript client does.
	quote := func(s string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	apis := []struct {
		name, path string
		body       func(text string, result bool) string
	}{
		{"anthropic", "/v1/messages", func(text string, result bool) string {
			msg := `{"role":"user","content":` + quote(text) + `}`
			if result {
				msg = `{"role":"user","content":"Read it."},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"path":"bucket.go"}}]},` +
					`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + quote(text) + `}]}`
			}
			return `{"model":"m","max_tokens":10,"messages":[` + msg + `]}`
		}},
		{"openai", "/v1/chat/completions", func(text string, result bool) string {
			msg := `{"role":"user","content":` + quote(text) + `}`
			if result {
				msg = `{"role":"user","content":"Read it."},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"bucket.go\"}"}}]},` +
					`{"role":"tool","tool_call_id":"call_1","content":` + quote(text) + `}`
			}
			return `{"model":"m","messages":[` + msg + `]}`
		}},
		{"responses", "/v1/responses", func(text string, result bool) string {
			msg := `{"type":"message","role":"user","content":[{"type":"input_text","text":` + quote(text) + `}]}`
			if result {
				msg = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Read it."}]},{"type":"function_call","call_id":"call_1","name":"read","arguments":"{\"path\":\"bucket.go\"}"},` +
					`{"type":"function_call_output","call_id":"call_1","output":` + quote(text) + `}`
			}
			return `{"model":"m","input":[` + msg + `]}`
		}},
	}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			rig := newProxyRig(t, rigOptions{})
			if api.name == "responses" {
				rig.up.setAnswer(rsAnswer("", "Done.", nil))
			}
			before := fileSize(t, rig.path)
			var texts []string
			for i := range requests {
				// Each a conversation of its own, its text its own.
				last := fmt.Sprintf("%s%06d", base[:size-6], i)
				texts = append(texts, last)
				result := i%2 == 1
				resp, got := rig.post(api.path, api.body(last, result), nil)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: %d %s", i, resp.StatusCode, got)
				}
				// Its messages and the answer, stored.
				n := 2
				if result {
					n = 4
				}
				rig.messages(resp.Header.Get(SessionHeader), n)
			}
			growth := float64(fileSize(t, rig.path)-before) / float64(requests*size)
			t.Logf("the file grew %.2f bytes a byte of text proxied", growth)
			if growth > maxGrowth {
				t.Errorf("the file grew %.2f bytes a byte of text proxied, at most %.2f", growth, maxGrowth)
			}
			// The last text reads back whole: as the content, and in
			// the parts as the client sent it.
			if n := rig.sessions(); n != requests {
				t.Fatalf("%d sessions, want %d", n, requests)
			}
			// Each as it was sent, though a tool's output is kept where
			// it lay in a body the engine was given, and the next
			// requests came after it.
			for _, text := range texts {
				stored := rig.findText(t, text)
				if !strings.Contains(stored.Content, text) {
					t.Errorf("the stored message's content is not the text sent")
				}
				if len(stored.Parts) > 0 && !bytes.Contains(stored.Parts, []byte(quote(text))) {
					t.Errorf("the stored message's parts do not hold the text as the client sent it")
				}
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// findText is the stored message whose content holds text, in any
// session.
func (rig *proxyRig) findText(t *testing.T, text string) model.Message {
	t.Helper()
	sessions, err := rig.svc.Store().Sessions()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		seqs := make([]uint64, s.MessageCount)
		for i := range seqs {
			seqs[i] = uint64(i + 1)
		}
		msgs, err := rig.svc.Messages(s.ID, seqs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if strings.Contains(m.Content, text) {
				return m
			}
		}
	}
	t.Fatal("no stored message holds the text")
	return model.Message{}
}
