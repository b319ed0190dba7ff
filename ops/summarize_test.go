package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/assemble"
	"weft/ops/opstest"
	"weft/ops/summary"
	"weft/ops/tools/toolstest"
)

// sumFixture is a session with prose, a tool call and its result, and a
// file name, to summarize.
func sumFixture(t *testing.T) (*toolstest.Fixture, string) {
	f := toolstest.New(t)
	msgs := []model.NewMessage{
		{Role: model.RoleUser, Content: "The login handler in auth/login.go fails when the session cookie is missing. Can you look?"},
		{Role: model.RoleAssistant, Content: "Sure. Let me read the handler first."},
	}
	msgs = append(msgs, opstest.ToolTurn("call_1", "read_file", `{"path":"auth/login.go"}`, "func Login(w http.ResponseWriter, r *http.Request) { c, _ := r.Cookie(\"sid\"); use(c.Value) }", 0)...)
	msgs = append(msgs,
		model.NewMessage{Role: model.RoleAssistant, Content: "Found it: r.Cookie returns an error when the cookie is missing, and the handler ignores it, so c is nil and c.Value panics. We should return 401 instead."},
		model.NewMessage{Role: model.RoleUser, Content: "Agreed, fix it and add a test in auth/login_test.go."},
		model.NewMessage{Role: model.RoleAssistant, Content: "Done: the handler now returns 401 without a cookie, and TestLoginWithoutCookie covers it. All 14 tests pass."},
		model.NewMessage{Role: model.RoleUser, Content: "Thanks! Now something else: rename the package."},
	)
	return f, f.Messages("login bug", msgs)
}

func TestSummarizeWithSampling(t *testing.T) {
	f, sid := sumFixture(t)
	var gotPrompt string
	var gotMax int
	sampler := func(_ context.Context, prompt string, maxTokens int) (string, string, error) {
		gotPrompt, gotMax = prompt, maxTokens
		return "  The login handler panicked without a cookie; it now returns 401, with a test.  ", "claude-test", nil
	}
	ctx := summary.WithSampler(context.Background(), sampler)
	// With an endpoint configured too, the client's model comes first.
	ops.SetSummaryEndpoint(f.Svc, summary.Endpoint{URL: "http://127.0.0.1:1/v1"})
	res, err := f.CallContext(ctx, "summarize_message_range", `{"start_idx":0,"end_idx":6,"max_tokens":120}`)
	if err != nil {
		t.Fatal(err)
	}
	r := res.(ops.SummarizeResult)
	if r.Source != ops.SourceSampling || r.Model != "claude-test" || r.Summary != "The login handler panicked without a cookie; it now returns 401, with a test." {
		t.Fatalf("result %+v", r)
	}
	if r.Stored || r.OperationID != "" || r.MessageCount != 7 || r.StartIdx != 0 || r.EndIdx != 6 || r.Tokens != tokens.Count(r.Summary) {
		t.Errorf("result %+v", r)
	}
	for _, want := range []string{`Messages 0–6 of "login bug", 2026-01-26 09:00–09:06 UTC`, "at most 120 tokens", "[0] user 2026-01-26 09:00:\nThe login handler", "[2] assistant", "[tool call read_file]", "[6] assistant 2026-01-26 09:06:\nDone: the handler"} {
		if !strings.Contains(gotPrompt, want) {
			t.Errorf("prompt does not have %q:\n%s", want, gotPrompt)
		}
	}
	if gotMax != 120 || strings.Contains(gotPrompt, "rename the package") {
		t.Errorf("max tokens %d; prompt goes past the range: %v", gotMax, strings.Contains(gotPrompt, "rename"))
	}

	// store=true records the same summary as a digest over the range.
	before, _, _ := f.Svc.View(sid)
	res, err = f.CallContext(ctx, "summarize_message_range", `{"start_idx":0,"end_idx":6,"store":true}`)
	if err != nil {
		t.Fatal(err)
	}
	r = res.(ops.SummarizeResult)
	v := f.View(sid)
	if !r.Stored || r.OperationID == "" || r.Version != before.Version+1 || v.Len() != 2 || v.Status[r.OperationID] != model.StatusActive {
		t.Fatalf("store: %+v; view has %d items", r, v.Len())
	}
	if s := v.Synth[v.Items[0].Synth]; s.Content != r.Summary || s.MessageCount != 7 {
		t.Errorf("digest item %+v", s)
	}
	if gotMax != ops.SumDefaultTokens {
		t.Errorf("default max tokens %d", gotMax)
	}

	// A client's model that fails is an error, and nothing is stored.
	failing := summary.WithSampler(context.Background(), func(context.Context, string, int) (string, string, error) {
		return "", "", errors.New("the user declined")
	})
	hash := f.FileHash()
	_, err = f.CallContext(failing, "summarize_message_range", `{"start_idx":0,"end_idx":1,"store":true}`)
	if !errors.Is(err, ops.ErrSummarySource) || !strings.Contains(err.Error(), "the user declined") || !strings.Contains(err.Error(), "source=extractive") {
		t.Errorf("failing sampler: %v", err)
	}
	empty := summary.WithSampler(context.Background(), func(context.Context, string, int) (string, string, error) { return " \n", "m", nil })
	if _, err = f.CallContext(empty, "summarize_message_range", `{"start_idx":0,"end_idx":1,"store":true}`); !errors.Is(err, ops.ErrSummarySource) || !strings.Contains(err.Error(), "empty summary") {
		t.Errorf("empty summary: %v", err)
	}
	if f.FileHash() != hash {
		t.Errorf("a failed summary changed the database")
	}
}

// sumRequest is what the test endpoint was sent.
type sumRequest struct {
	path, auth string
	body       struct {
		Model    string                 `json:"model"`
		Messages []assemble.ChatMessage `json:"messages"`
		Max      int                    `json:"max_tokens"`
	}
}

func TestSummarizeWithEndpoint(t *testing.T) {
	f, sid := sumFixture(t)
	ok := `{"id":"x","model":"served-model","choices":[{"index":0,"message":{"role":"assistant","content":"Fixed the missing-cookie panic: 401 now."},"finish_reason":"stop"}]}`
	tests := []struct {
		name    string
		env     map[string]string
		handler func(w http.ResponseWriter, r *http.Request)
		args    string
		model   string
		says    string // the error, if one is expected
		invalid bool   // a bad request (configuration) rather than the endpoint's failure
	}{
		{name: "answers", env: map[string]string{summary.SettingModel: "small", summary.SettingKey: "k-123"},
			handler: func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, ok) }, model: "served-model"},
		{name: "full URL, model from the env", env: map[string]string{summary.SettingModel: "small"}, args: `,"source":"endpoint"`,
			handler: func(w http.ResponseWriter, _ *http.Request) {
				io.WriteString(w, `{"choices":[{"message":{"content":"Fixed it."}}]}`)
			}, model: "small"},
		{name: "non-200 with an error message",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			}, says: "answered 401 Unauthorized: Incorrect API key provided"},
		{name: "non-200 without JSON",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, "<html>upstream down</html>")
			}, says: `answered 502 Bad Gateway: "<html>upstream down</html>"`},
		{name: "bad JSON",
			handler: func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"choices":[{"message":`) },
			says:    "did not answer with chat-completions JSON"},
		{name: "no choices",
			handler: func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"choices":[]}`) },
			says:    "answered without choices"},
		{name: "no text",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				io.WriteString(w, `{"choices":[{"message":{"content":null},"finish_reason":"length"}]}`)
			}, says: `answered with no text (finish_reason "length")`},
		{name: "timeout", env: map[string]string{summary.SettingTimeout: "50ms"},
			handler: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			says:    "did not answer within 50ms (WEFT_SUMMARY_TIMEOUT sets how long to wait)"},
		{name: "bad timeout", env: map[string]string{summary.SettingTimeout: "soon"},
			handler: func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, ok) },
			says:    `WEFT_SUMMARY_TIMEOUT "soon" is not a positive duration`, invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []sumRequest
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var rq sumRequest
				rq.path, rq.auth = r.URL.Path, r.Header.Get("Authorization")
				_ = json.NewDecoder(r.Body).Decode(&rq.body)
				got = append(got, rq)
				tt.handler(w, r)
			}))
			defer srv.Close()
			url := srv.URL + "/v1"
			if strings.Contains(tt.name, "full URL") {
				url = srv.URL + "/v1/chat/completions"
			}
			ops.SetSummaryEndpoint(f.Svc, summary.Endpoint{URL: url, Model: tt.env[summary.SettingModel], APIKey: tt.env[summary.SettingKey], Timeout: tt.env[summary.SettingTimeout]})
			before := f.FileHash()
			res, err := f.Call("summarize_message_range", fmt.Sprintf(`{"session_id":%q,"start_idx":2,"end_idx":4,"store":true%s}`, sid, tt.args))
			if tt.says != "" {
				if err == nil || !strings.Contains(err.Error(), tt.says) {
					t.Fatalf("error %v, want one saying %q", err, tt.says)
				}
				if errors.Is(err, ops.ErrInvalid) != tt.invalid || errors.Is(err, ops.ErrSummarySource) == tt.invalid {
					t.Errorf("error kind of %v: invalid %v, want %v", err, errors.Is(err, ops.ErrInvalid), tt.invalid)
				}
				if strings.Contains(err.Error(), "k-123") {
					t.Errorf("the error shows the API key: %v", err)
				}
				if f.FileHash() != before {
					t.Errorf("a failed summary changed the database")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := res.(ops.SummarizeResult)
			if r.Source != ops.SourceEndpoint || r.Model != tt.model || !r.Stored || r.Summary == "" {
				t.Errorf("result %+v", r)
			}
			f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, r.OperationID))
			if len(got) != 1 {
				t.Fatalf("%d requests", len(got))
			}
			rq := got[0]
			if rq.path != "/v1/chat/completions" || rq.body.Max != ops.SumDefaultTokens || rq.body.Model != tt.env[summary.SettingModel] {
				t.Errorf("request %+v", rq)
			}
			if want := map[bool]string{true: "Bearer k-123", false: ""}[tt.env[summary.SettingKey] != ""]; rq.auth != want {
				t.Errorf("authorization %q, want %q", rq.auth, want)
			}
			if len(rq.body.Messages) != 2 || rq.body.Messages[0].Role != model.RoleSystem || !strings.Contains(rq.body.Messages[1].Content, "[3] tool") {
				t.Errorf("messages %+v", rq.body.Messages)
			}
		})
	}
}

func TestSummarizeExtractive(t *testing.T) {
	f, sid := sumFixture(t)
	r := f.MustCall("summarize_message_range", `{"start_idx":0,"end_idx":6}`).(ops.SummarizeResult)
	if r.Source != ops.SourceExtractive || r.Model != "" || r.Tokens > ops.SumDefaultTokens {
		t.Fatalf("result %+v", r)
	}
	for _, want := range []string{
		`Messages 0–6 of "login bug", 2026-01-26 09:00–09:06 UTC.`,
		"Tools: read_file.", "Files: auth/login.go, auth/login_test.go.",
		"- user: The login handler in auth/login.go fails when the session cookie is missing.",
		"We should return 401 instead.", "All 14 tests pass.",
	} {
		if !strings.Contains(r.Summary, want) {
			t.Errorf("summary does not have %q:\n%s", want, r.Summary)
		}
	}
	if strings.Contains(r.Summary, "rename the package") || strings.Contains(r.Summary, "Sure.") || strings.Contains(r.Summary, "func Login") {
		t.Errorf("summary goes past the range or keeps chatter:\n%s", r.Summary)
	}
	// Deterministic, and within any budget.
	again := f.MustCall("summarize_message_range", `{"start_idx":0,"end_idx":6}`).(ops.SummarizeResult)
	if again.Summary != r.Summary {
		t.Errorf("two summaries differ:\n%s\n---\n%s", r.Summary, again.Summary)
	}
	for _, budget := range []int{16, 30, 60, 100, 4000} {
		r := f.MustCall("summarize_message_range", fmt.Sprintf(`{"start_idx":0,"end_idx":6,"max_tokens":%d,"source":"extractive"}`, budget)).(ops.SummarizeResult)
		if r.Tokens > budget || r.Summary == "" {
			t.Errorf("budget %d: %d tokens: %q", budget, r.Tokens, r.Summary)
		}
	}
	// By IDs, not contiguous.
	r = f.MustCall("summarize_message_range", `{"ids":["m1","m7"]}`).(ops.SummarizeResult)
	if !strings.HasPrefix(r.Summary, `2 messages between 0 and 6 of "login bug"`) || r.MessageCount != 2 {
		t.Errorf("by ids: %+v", r)
	}
	// Stored, it is a digest like any other: revertible.
	r = f.MustCall("summarize_message_range", fmt.Sprintf(`{"session_id":%q,"start_idx":1,"end_idx":5,"store":true,"when_tags":["short"]}`, sid)).(ops.SummarizeResult)
	ops, _ := f.Svc.Operations(sid)
	last := ops[len(ops)-1]
	if !r.Stored || last.ID != r.OperationID || last.Type != model.OpDigest || last.Payload.Summary != r.Summary || len(last.Targets) != 5 || last.WhenTags[0] != "short" {
		t.Errorf("stored op %+v, result %+v", last, r)
	}
}

func TestSummarizeRefusals(t *testing.T) {
	f, sid := sumFixture(t)
	f.MustCall("tag_messages", `{"start_idx":0,"end_idx":0,"tags":["x"]}`)
	tests := []struct {
		args string
		env  string // WEFT_SUMMARY_URL
		kind error
		says string
	}{
		{`{"start_idx":0,"end_idx":9}`, "", ops.ErrInvalid, "end_idx 9 is past the end of the thread (8 items: 0..7)"},
		{`{"start_idx":5,"end_idx":2}`, "", ops.ErrInvalid, "start_idx 5 is after end_idx 2"},
		{`{"start_idx":-1,"end_idx":2}`, "", ops.ErrInvalid, "start_idx -1 is negative"},
		{`{}`, "", ops.ErrInvalid, "nothing selected"},
		{`{"ids":["m99"]}`, "", ops.ErrNotFound, `id "m99" is not in the effective thread`},
		{`{"session_id":"nosuchsession","start_idx":0,"end_idx":1}`, "", ops.ErrNotFound, `session "nosuchsession" not found`},
		{`{"start_idx":0,"end_idx":1,"store":true,"expected_version":1}`, "", ops.ErrConflict, "is at version 3, not 1: since then v2 8 messages appended by operator; v3 tag x on 0 by operator"},
		{`{"start_idx":0,"end_idx":1,"max_tokens":5}`, "", ops.ErrInvalid, "max_tokens 5 is outside 16..4000"},
		{`{"start_idx":0,"end_idx":1,"source":"oracle"}`, "", ops.ErrInvalid, `source "oracle" is not auto, sampling, endpoint or extractive`},
		{`{"start_idx":0,"end_idx":1,"source":"sampling"}`, "", ops.ErrInvalid, "this caller cannot lend its model"},
		{`{"start_idx":0,"end_idx":1,"source":"endpoint"}`, "", ops.ErrInvalid, "WEFT_SUMMARY_URL is not set"},
		{`{"start_idx":0,"end_idx":1}`, "ftp://models.local/v1", ops.ErrInvalid, `WEFT_SUMMARY_URL "ftp://models.local/v1" is not an http(s) URL`},
		{`{"start_idx":0,"end_idx":1,"store":true,"when_tags":["a b"]}`, "", ops.ErrInvalid, "when_tags"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ops.SetSummaryEndpoint(f.Svc, summary.Endpoint{URL: tt.env})
			before := f.FileHash()
			_, err := f.Call("summarize_message_range", tt.args)
			if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.says) {
				t.Fatalf("error %v, want %v saying %q", err, tt.kind, tt.says)
			}
			if f.FileHash() != before {
				t.Errorf("the database file changed")
			}
		})
	}
	if ops, _ := f.Svc.Operations(sid); len(ops) != 1 {
		t.Errorf("%d operations after refusals, want the tag only", len(ops))
	}
}

func TestSumTranscriptKeepsBothEnds(t *testing.T) {
	f := toolstest.New(t)
	long := strings.Repeat("word ", 1000) // 5000 bytes, over the message cap
	var msgs []model.NewMessage
	for i := range 200 {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("start %d %send %d", i, long, i)})
	}
	f.Messages("long", msgs)
	var prompt string
	ctx := summary.WithSampler(context.Background(), func(_ context.Context, p string, _ int) (string, string, error) {
		prompt = p
		return "ok", "", nil
	})
	r, err := f.Svc.SummarizeMessageRange(ctx, ops.SummarizeArgs{Selection: ops.Selection{StartIdx: new(0), EndIdx: new(199)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(prompt) > summary.MaxPromptBytes+2000 || r.PromptShortened < 200 {
		t.Errorf("prompt of %d bytes, %d shortened", len(prompt), r.PromptShortened)
	}
	for _, want := range []string{"[0] user", "start 0 word", "word end 0", "[199] user", "end 199", "messages left out of this prompt"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt does not have %q", want)
		}
	}
}

// BenchmarkSummarizeExtractive2k is the local summary of 2,000 messages
// (about 1.3 MB) of a 100k-message session.
func BenchmarkSummarizeExtractive2k(b *testing.B) {
	path, sid := opstest.BenchFile(b, 100_000, 650, 0)
	svc := opstest.BenchService(b, path)
	ctx := context.Background()
	start, end := 50_000, 51_999
	for b.Loop() {
		r, err := svc.SummarizeMessageRange(ctx, ops.SummarizeArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Source: ops.SourceExtractive})
		if err != nil || r.Tokens > ops.SumDefaultTokens {
			b.Fatal(err, r.Tokens)
		}
	}
}

// summarize_message_range's expected_version holds as every edit's does:
// with ids, a change since to other items lets it through, a change to
// the named ones refuses it (it refused both before).
func TestSummarizeByIDsExpectedVersion(t *testing.T) {
	f, sid := sumFixture(t)
	v := f.Version(sid)
	f.MustCall("tag_messages", fmt.Sprintf(`{"session_id":%q,"ids":["m8"],"tags":["later"]}`, sid))
	r := f.MustCall("summarize_message_range", fmt.Sprintf(`{"session_id":%q,"ids":["m1","m2"],"store":true,"source":"extractive","expected_version":%d}`, sid, v)).(ops.SummarizeResult)
	if !r.Stored {
		t.Fatalf("a change to another item refused it: %+v", r)
	}
	v = f.Version(sid)
	f.MustCall("tag_messages", fmt.Sprintf(`{"session_id":%q,"ids":["m4"],"tags":["touched"]}`, sid))
	before := f.FileHash()
	_, err := f.Svc.SummarizeMessageRange(context.Background(), ops.SummarizeArgs{Selection: ops.Selection{SessionID: sid, IDs: []model.ItemID{"m3", "m4"}}, Store: true, Source: ops.SourceExtractive, EditOptions: ops.EditOptions{ExpectedVersion: &v}})
	if !errors.Is(err, ops.ErrConflict) {
		t.Errorf("a change to a named item: %v, want a conflict", err)
	}
	if f.FileHash() != before {
		t.Error("the refused summary changed the file")
	}
}
