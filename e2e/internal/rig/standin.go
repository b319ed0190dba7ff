package rig

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Exchange is one request a provider's stand-in got and what it
// answered, as its request log keeps it.
type Exchange struct {
	Time    time.Time       `json:"time"`
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Headers http.Header     `json:"headers"`
	Request json.RawMessage `json:"request,omitempty"`
	Status  int             `json:"status"`
	// Answered is what the stand-in did, in a few words (tool_use NAME,
	// text, 404), for the log and a failure's report.
	Answered string `json:"answered"`
	// Answer is the body the stand-in wrote, byte for byte, when it
	// keeps it: what a client behind a proxy must get unchanged.
	Answer string `json:"answer,omitempty"`
}

// NewExchange starts the exchange of request r, whose body is body: the
// body is kept when it is JSON.
func NewExchange(r *http.Request, body []byte) Exchange {
	ex := Exchange{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Headers: r.Header.Clone()}
	if json.Valid(body) {
		ex.Request = body
	}
	return ex
}

// Recorder keeps a stand-in's exchanges in the order they ended, and
// writes each to Log, one JSON object a line, when Log is set. A
// stand-in embeds it.
type Recorder struct {
	Log io.Writer

	mu        sync.Mutex
	exchanges []Exchange
}

// Record keeps ex and writes it to the log.
func (r *Recorder) Record(ex Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exchanges = append(r.exchanges, ex)
	if r.Log != nil {
		b, _ := json.Marshal(ex)
		_, _ = r.Log.Write(append(b, '\n'))
	}
}

// Exchanges is every exchange recorded so far.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.exchanges)
}
