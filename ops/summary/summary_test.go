package summary

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"weft/formats"
	"weft/model"
)

// TestEndpointSettings: a setting that cannot be used refuses the
// request before anything is sent, naming the setting.
func TestEndpointSettings(t *testing.T) {
	tests := []struct {
		e    Endpoint
		says string
	}{
		{Endpoint{URL: "ftp://models.local/v1"}, `WEFT_SUMMARY_URL "ftp://models.local/v1" is not an http(s) URL`},
		{Endpoint{URL: "http://"}, `WEFT_SUMMARY_URL "http://" is not an http(s) URL`},
		{Endpoint{URL: "http://127.0.0.1:9/v1", Timeout: "soon"}, `WEFT_SUMMARY_TIMEOUT "soon" is not a positive duration`},
		{Endpoint{URL: "http://127.0.0.1:9/v1", Timeout: "-3"}, `WEFT_SUMMARY_TIMEOUT "-3" is not a positive duration`},
	}
	for _, tt := range tests {
		_, _, err := tt.e.Ask(context.Background(), "i", "t", 100)
		var se *SettingError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, tt.says) {
			t.Errorf("%+v: %v, want a setting error saying %q", tt.e, err, tt.says)
		}
	}
	if (Endpoint{}).Configured() || (Endpoint{URL: "  "}).Configured() || !(Endpoint{URL: "http://x"}).Configured() {
		t.Error("Configured is wrong")
	}
}

// TestEndpointUsesItsClientAndSettings: the request goes to the
// chat-completions path with the model and key configured, through the
// client given.
func TestEndpointUsesItsClientAndSettings(t *testing.T) {
	var path, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		w.Write([]byte(`{"model":"m-1","choices":[{"message":{"content":"short"}}]}`))
	}))
	defer srv.Close()
	used := false
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	e := Endpoint{URL: srv.URL + "/v1/", Model: "m", APIKey: "k", Timeout: "2", Client: client}
	text, model, err := e.Ask(context.Background(), "summarize", "[0] user: hi", 50)
	if err != nil || text != "short" || model != "m-1" {
		t.Fatalf("Ask = %q, %q, %v", text, model, err)
	}
	if !used || path != "/v1/chat/completions" || auth != "Bearer k" {
		t.Errorf("client used %v, path %q, authorization %q", used, path, auth)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTranscriptBounds: a long message keeps its start and end, and a
// range too long for one prompt keeps its first and last messages.
func TestTranscriptBounds(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	items := make([]formats.Item, 300)
	indices := make([]int, len(items))
	for i := range items {
		items[i] = formats.Item{Role: model.RoleUser, Content: "start " + long + "end"}
		indices[i] = 100 + i
	}
	text, cut := Transcript(items, indices)
	if len(text) > MaxPromptBytes+messageRunes || cut < len(items) {
		t.Fatalf("%d bytes, %d cut", len(text), cut)
	}
	for _, want := range []string{"[100] user:\nstart word", "word end", "[399] user", "messages left out of this prompt"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript does not have %q", want)
		}
	}
}

// TestExtractIsDeterministicAndBounded: the local summary is the same
// every time and never over its budget.
func TestExtractIsDeterministicAndBounded(t *testing.T) {
	items := []formats.Item{
		{Role: model.RoleUser, Content: "The deploy script in ops/deploy.sh fails on the second host because the SSH key is missing. Why?"},
		{Role: model.RoleAssistant, Content: "Because the key is only copied to the first host. We decided to copy it in the bootstrap step instead."},
		{Role: model.RoleUser, Content: "Thanks, that works now."},
	}
	first := Extract(items, "Messages 0–2", 60)
	if first != Extract(items, "Messages 0–2", 60) {
		t.Error("two summaries of the same range differ")
	}
	if !strings.HasPrefix(first, "Messages 0–2") || !strings.Contains(first, "ops/deploy.sh") {
		t.Errorf("summary:\n%s", first)
	}
}
