package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// anError reads a Messages API error body.
func anError(t *testing.T, body []byte) (string, string) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type == "" || e.Error.Message == "" {
		t.Fatalf("not a Messages API error: %s", body)
	}
	return e.Error.Type, e.Error.Message
}

// oaError reads a chat completions error body.
func oaError(t *testing.T, body []byte) (string, string) {
	t.Helper()
	var e struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error: %s", body)
	}
	return e.Error.Type, e.Error.Message
}

func TestProxyPassesUpstreamErrorsBack(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	anHeaders := map[string]string{"X-Api-Key": "k"}
	for _, c := range []struct {
		path, body, answer string
		status             int
		header             map[string]string
	}{
		{"/v1/messages", anBody(false, `{"role":"user","content":"hi"}`), `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, http.StatusTooManyRequests, anHeaders},
		{"/v1/messages", anBody(true, `{"role":"user","content":"hi"}`), `{"type":"error","error":{"type":"api_error","message":"oops"}}`, http.StatusInternalServerError, anHeaders},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, http.StatusTooManyRequests, anHeaders},
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, `{"error":{"message":"oops","type":"server_error"}}`, http.StatusInternalServerError, anHeaders},
		{"/v1/responses", rsBody(false, rsU1), `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, http.StatusTooManyRequests, rsHeaders},
		{"/v1/responses", rsBody(true, rsU1), `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, http.StatusInternalServerError, rsHeaders},
	} {
		rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			io.WriteString(w, c.answer)
		})
		resp, got := rig.post(c.path, c.body, c.header)
		if resp.StatusCode != c.status || string(got) != c.answer || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("%s %d: the client got %d %s %v", c.path, c.status, resp.StatusCode, got, resp.Header)
		}
		// The question is stored; nothing of the answer is.
		rig.messages(resp.Header.Get(SessionHeader), 1)
	}
}

func TestProxyMidStreamDisconnectStoresNoHalfMessage(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	gone := make(chan struct{})
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		anthropicStream(w, "A long answer that is cut.", nil, 3) // message_start, a block, a delta
		<-r.Context().Done()                                     // weft hung up on the upstream
		close(gone)
	})
	sid := rig.leaveMidStream("/v1/messages", anBody(true, `{"role":"user","content":"tell me"}`), gone)
	// Nothing of the answer is stored, now or later.
	time.Sleep(50 * time.Millisecond)
	rig.messages(sid, 1)

	// An answer that stops short of its end, to a client that stays,
	// is not stored either.
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		anthropicStream(w, "Cut short.", nil, 4)
	})
	resp2, _ := rig.post("/v1/messages", anBody(true, `{"role":"user","content":"tell me"}`), nil)
	if resp2.Header.Get(SessionHeader) != sid {
		t.Errorf("the retry went to %s, not %s", resp2.Header.Get(SessionHeader), sid)
	}
	rig.messages(sid, 1)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(rig.logs.String(), "stopped before its end"); {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say the answer was cut: %s", rig.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	rig.messages(sid, 1)
}

func TestProxyKeepsCredentialsOutOfTheFileAndLogs(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	secrets := map[string]string{
		"X-Api-Key":      "sk-ant-api03-SECRET-KEY-ONE",
		"Authorization":  "Bearer SECRET-BEARER-TWO",
		"Anthropic-Beta": "SECRET-BETA-THREE",
	}
	rig.post("/v1/messages", anBody(true, `{"role":"user","content":"hi"}`), secrets)
	rig.post("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, secrets)
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"no"}}`)
	})
	rig.post("/v1/messages", anBody(false, `{"role":"user","content":"again"}`), secrets)
	// An upstream that cannot be reached: weft logs it.
	down := newProxyRig(t, rigOptions{Upstreams: Upstreams{Anthropic: "http://127.0.0.1:1"}})
	resp, body := down.post("/v1/messages", anBody(false, `{"role":"user","content":"hi"}`), secrets)
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("an unreachable upstream: %d %s", resp.StatusCode, body)
	}
	if typ, _ := anError(t, body); typ != "api_error" {
		t.Errorf("error type %s", typ)
	}
	if !strings.Contains(down.logs.String(), "cannot be reached") {
		t.Errorf("the log does not say the upstream cannot be reached: %s", down.logs.String())
	}
	for _, rig := range []*proxyRig{rig, down} {
		file, err := os.ReadFile(rig.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"SECRET-KEY-ONE", "SECRET-BEARER-TWO", "SECRET-BETA-THREE"} {
			if bytes.Contains(file, []byte(secret)) {
				t.Errorf("the file holds %s", secret)
			}
			if strings.Contains(rig.logs.String(), secret) {
				t.Errorf("the log holds %s", secret)
			}
		}
	}
}

func TestProxyRefusesHostileBodies(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	resp, _ := rig.post("/v1/messages", anBody(false, `{"role":"user","content":"hi"}`), nil)
	rig.messages(resp.Header.Get(SessionHeader), 2)
	before, asked := rig.fileHash(), rig.up.count()
	huge := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", MaxBodyBytes) + `"}]}`
	for _, c := range []struct {
		name, path, body string
		status           int
		says             string
	}{
		{"huge", "/v1/messages", huge, http.StatusRequestEntityTooLarge, "larger than 32 MB"},
		{"huge, openai", "/v1/chat/completions", huge, http.StatusRequestEntityTooLarge, "larger than 32 MB"},
		{"not JSON", "/v1/messages", `{"messages": [`, http.StatusBadRequest, "not valid JSON"},
		{"not an object", "/v1/messages", `[1,2]`, http.StatusBadRequest, "not a JSON object"},
		{"no messages", "/v1/messages", `{"model":"m"}`, http.StatusBadRequest, `no "messages"`},
		{"messages a string", "/v1/chat/completions", `{"messages":"hi"}`, http.StatusBadRequest, "not a list of messages"},
		{"a role of the wrong type", "/v1/messages", `{"messages":[{"role":1,"content":"hi"}]}`, http.StatusBadRequest, `"role" is not a string`},
		{"a tool message in messages", "/v1/messages", `{"messages":[{"role":"tool","content":"hi"}]}`, http.StatusBadRequest, "not user, assistant or system"},
		{"content of the wrong type", "/v1/chat/completions", `{"messages":[{"role":"user","content":7}]}`, http.StatusBadRequest, "content"},
		{"system of the wrong type", "/v1/messages", `{"system":7,"messages":[{"role":"user","content":"hi"}]}`, http.StatusBadRequest, `"system" is a number`},
		{"empty messages", "/v1/messages", `{"messages":[]}`, http.StatusBadRequest, "messages is empty"},
		{"not UTF-8", "/v1/messages", "{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}", http.StatusBadRequest, "not valid UTF-8"},
		{"not UTF-8, openai", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}", http.StatusBadRequest, "not valid UTF-8"},
		{"not UTF-8 outside the messages", "/v1/messages", "{\"model\":\"m\xff\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", http.StatusBadRequest, "not valid UTF-8"},
		{"a GET", "/v1/messages", "", http.StatusMethodNotAllowed, "POST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := rig.send(t, c.path, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			var msg string
			if strings.Contains(c.path, "messages") {
				_, msg = anError(t, body)
			} else {
				_, msg = oaError(t, body)
			}
			if !strings.Contains(msg, c.says) {
				t.Errorf("error %q does not say %q", msg, c.says)
			}
		})
	}
	if rig.fileHash() != before || rig.up.count() != asked {
		t.Error("a refused request changed the file or reached the upstream")
	}
}

func TestProxyTokenAndSessionNames(t *testing.T) {
	rig := newProxyRig(t, rigOptions{Token: "weft-token"})
	body := anBody(false, `{"role":"user","content":"hi"}`)
	resp, got := rig.post("/v1/messages", body, map[string]string{"Authorization": "Bearer weft-token"})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without X-Weft-Token: %d %s", resp.StatusCode, got)
	}
	if typ, msg := anError(t, got); typ != "authentication_error" || !strings.Contains(msg, TokenHeader) {
		t.Errorf("401: %s %s", typ, msg)
	}
	resp, got = rig.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, map[string]string{TokenHeader: "wrong"})
	if typ, msg := oaError(t, got); resp.StatusCode != http.StatusUnauthorized || typ != "invalid_request_error" || !strings.Contains(msg, "wrong") {
		t.Errorf("a wrong token: %d %s %s", resp.StatusCode, typ, msg)
	}
	if rig.up.count() != 0 {
		t.Fatal("a refused request reached the upstream")
	}

	// With the token: the client's own Authorization goes upstream, the
	// token does not. A session named in the path is made with that
	// title, then continued.
	hdr := map[string]string{TokenHeader: "weft-token", "Authorization": "Bearer sk-client", "X-Weft-Author": "tester"}
	resp, got = rig.post("/s/my%20work/v1/messages", body, hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	up := rig.up.last()
	if up.Header.Get("Authorization") != "Bearer sk-client" || up.Header.Get(TokenHeader) != "" || up.Header.Get("X-Weft-Author") != "" || up.Path != "/v1/messages" {
		t.Errorf("upstream got %s %v", up.Path, up.Header)
	}
	sid := resp.Header.Get(SessionHeader)
	info, _, err := rig.svc.View(sid)
	if err != nil || info.Title != "my work" {
		t.Fatalf("the named session: %+v %v", info, err)
	}
	// The header names it too; a name the path contradicts is refused.
	resp, _ = rig.post("/v1/messages", anBody(false, `{"role":"user","content":"hi"}`, `{"role":"assistant","content":"Done."}`, `{"role":"user","content":"more"}`), map[string]string{TokenHeader: "weft-token", SessionHeader: "my work"})
	if resp.Header.Get(SessionHeader) != sid {
		t.Errorf("named by header: %s, want %s", resp.Header.Get(SessionHeader), sid)
	}
	rig.messages(sid, 4)
	resp, got = rig.post("/s/one/v1/messages", body, map[string]string{TokenHeader: "weft-token", SessionHeader: "two"})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("two names: %d %s", resp.StatusCode, got)
	}

	// count_tokens: the effective thread is counted, nothing stored.
	snip(t, rig.svc, sid, "m1", "m2")
	count := anBody(false, `{"role":"user","content":"hi"}`, `{"role":"assistant","content":"Done."}`, `{"role":"user","content":"more"}`, `{"role":"assistant","content":"Done."}`, `{"role":"user","content":"count me"}`)
	resp, got = rig.post("/v1/messages/count_tokens", count, hdr)
	if resp.StatusCode != http.StatusOK || string(got) != `{"input_tokens":42}` {
		t.Fatalf("count_tokens: %d %s", resp.StatusCode, got)
	}
	sent := field(t, rig.up.last().Body, "messages")
	if rig.up.last().Path != "/v1/messages/count_tokens" || strings.Contains(sent, `"hi"`) || !strings.Contains(sent, "count me") {
		t.Errorf("count_tokens sent %s", sent)
	}
	rig.messages(sid, 4)

	// Other paths of the API pass through untouched.
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) { writeJSON(w, `{"data":[]}`) })
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, rig.weft.URL+"/v1/models", nil)
	req.Header.Set(TokenHeader, "weft-token")
	req.Header.Set("X-Api-Key", "k")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || string(b) != `{"data":[]}` || rig.up.last().Path != "/v1/models" || rig.up.last().Method != http.MethodGet {
		t.Errorf("/v1/models: %d %s", r.StatusCode, b)
	}
}

// An answer longer than weft keeps is relayed but not stored, and what
// is held of it stays bounded while it streams.
func TestProxyAnswerTooLongIsNotStored(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		rec := &answerRecorder{api: Anthropic, streaming: streaming}
		chunk := []byte("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("x", 1<<20) + "\"}}\n\n")
		for range maxAnswerBytes/len(chunk) + 2 {
			rec.feed(chunk)
		}
		if !rec.over || len(rec.body) != 0 || rec.stream != nil {
			t.Errorf("streaming %v: over %v, holding %d bytes", streaming, rec.over, len(rec.body))
		}
		if err := rec.store(); err == nil || !strings.Contains(err.Error(), "too long") {
			t.Errorf("streaming %v: %v", streaming, err)
		}
	}
}

// cutWriter cuts in half the JSON of the first event written whole
// whose data holds marker, as a broken upstream might send it.
type cutWriter struct {
	http.ResponseWriter
	marker string
	done   bool
}

func (c *cutWriter) Write(p []byte) (int, error) {
	at := bytes.Index(p, []byte("data: "))
	if c.done || at < 0 || !bytes.Contains(p, []byte(c.marker)) {
		return c.ResponseWriter.Write(p)
	}
	c.done = true
	data := bytes.TrimRight(p[at+len("data: "):], "\n")
	cut := append(append([]byte{}, p[:at+len("data: ")]...), data[:len(data)/2]...)
	if _, err := c.ResponseWriter.Write(append(cut, "\n\n"...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *cutWriter) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }

// An answer one of whose stream's events is not JSON is broken: the
// client gets what came, as it came, and nothing of the answer is
// stored, with a word in the log.
func TestProxyStreamWithABrokenEventStoresNothing(t *testing.T) {
	for _, c := range []struct {
		name, path, body, marker string
		answer                   func(w http.ResponseWriter, r *http.Request, body []byte)
	}{
		{"anthropic", "/v1/messages", anBody(true, `{"role":"user","content":"count"}`), `"text_delta"`, answerText("one two three four five six")},
		{"openai", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"count"}]}`, `"content":"one`, answerText("one two three four five six")},
		{"responses", "/v1/responses", rsBody(true, rsU1), `"response.output_text.delta"`, rsAnswer("", "one two three four five six", nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rig := newProxyRig(t, rigOptions{})
			var sent bytes.Buffer
			rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, body []byte) {
				rec := httptest.NewRecorder()
				c.answer(&cutWriter{ResponseWriter: rec, marker: c.marker}, r, body)
				sent.Write(rec.Body.Bytes())
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.Write(rec.Body.Bytes())
			})
			resp, got := rig.post(c.path, c.body, nil)
			if resp.StatusCode != http.StatusOK || string(got) != sent.String() {
				t.Fatalf("the client got %d\n%s\nnot what the upstream sent\n%s", resp.StatusCode, got, sent.String())
			}
			sid := resp.Header.Get(SessionHeader)
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(rig.logs.String(), "does not parse"); {
				if time.Now().After(deadline) {
					t.Fatalf("the log does not say the answer was broken: %s", rig.logs.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			rig.messages(sid, 1) // the question, and nothing of the answer
		})
	}
}
