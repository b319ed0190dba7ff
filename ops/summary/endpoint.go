package summary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The operator's settings for the endpoint source, by the names users
// set them with (the CLI reads them from the environment).
const (
	SettingURL     = "WEFT_SUMMARY_URL"
	SettingModel   = "WEFT_SUMMARY_MODEL"
	SettingKey     = "WEFT_SUMMARY_API_KEY"
	SettingTimeout = "WEFT_SUMMARY_TIMEOUT"
)

// ErrSource marks a failure of a model asked for a summary (the client's
// or the endpoint's), as opposed to a bad request.
var ErrSource = errors.New("summary source failed")

// SettingError is an endpoint setting that cannot be used as it is: the
// request is refused, and Msg says which setting and why.
type SettingError struct{ Msg string }

// Error returns the message.
func (e *SettingError) Error() string { return e.Msg }

const (
	// defaultTimeout bounds one endpoint request.
	defaultTimeout = 60 * time.Second
	// maxAnswer bounds what is read of an endpoint's answer.
	maxAnswer = 4 << 20
)

// Endpoint is an OpenAI-compatible chat-completions endpoint that writes
// summaries, as the operator configured it. The strings are the settings
// as given (SettingURL, SettingModel, SettingKey, SettingTimeout): they
// are checked when a summary is asked for, so a bad one refuses that
// request and says how to mend it.
type Endpoint struct {
	URL    string // the endpoint, or a base URL ending in /v1; empty: none
	Model  string // the model to ask for; empty: the endpoint's default
	APIKey string // sent as a bearer token when set
	// Timeout is how long one request may take: a duration ("30s") or
	// seconds; empty: a minute.
	Timeout string
	// Client sends the requests; nil: a client of its own.
	Client *http.Client
}

// Configured reports whether an endpoint is set at all.
func (e Endpoint) Configured() bool { return strings.TrimSpace(e.URL) != "" }

// settingf is an error about a setting.
func settingf(format string, args ...any) error {
	return &SettingError{fmt.Sprintf(format, args...)}
}

// timeout is how long the endpoint may take.
func (e Endpoint) timeout() (time.Duration, error) {
	raw := strings.TrimSpace(e.Timeout)
	if raw == "" {
		return defaultTimeout, nil
	}
	if d, err := time.ParseDuration(raw); err == nil && d > 0 {
		return d, nil
	}
	if n, err := strconv.ParseFloat(raw, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	return 0, settingf("%s %q is not a positive duration (like 30s or 2m)", SettingTimeout, raw)
}

// url is the chat-completions URL: the setting as it is when it names
// chat/completions, else with that path added (so a base URL ending in
// /v1 works too).
func (e Endpoint) url() (*url.URL, error) {
	raw := strings.TrimSpace(e.URL)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, settingf("%s %q is not an http(s) URL of an OpenAI-compatible chat-completions endpoint", SettingURL, raw)
	}
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions") {
		u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	}
	return u, nil
}

// chatMessage is a message of the request: the endpoint is asked with a
// system and a user message of plain text.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Ask asks the endpoint for a summary: the instructions as the system
// message, the transcript as the user's. It returns the summary and the
// model that wrote it. A setting that cannot be used is a *SettingError; a
// failure of the endpoint is ErrSource.
func (e Endpoint) Ask(ctx context.Context, instructions, transcript string, maxTokens int) (string, string, error) {
	u, err := e.url()
	if err != nil {
		return "", "", err
	}
	timeout, err := e.timeout()
	if err != nil {
		return "", "", err
	}
	where := u.Redacted()
	req := struct {
		Model       string        `json:"model,omitempty"`
		Messages    []chatMessage `json:"messages"`
		MaxTokens   int           `json:"max_tokens"`
		Temperature float64       `json:"temperature"`
	}{
		Model: strings.TrimSpace(e.Model),
		Messages: []chatMessage{
			{Role: "system", Content: instructions},
			{Role: "user", Content: transcript},
		},
		MaxTokens: maxTokens,
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", "", settingf("%s: %v", SettingURL, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if key := strings.TrimSpace(e.APIKey); key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	client := e.Client
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(hreq)
	if err != nil {
		var netErr net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
			return "", "", fmt.Errorf("%w: the summary endpoint %s did not answer within %s (%s sets how long to wait)", ErrSource, where, timeout, SettingTimeout)
		}
		return "", "", fmt.Errorf("%w: the summary endpoint %s cannot be reached: %v", ErrSource, where, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", "", fmt.Errorf("%w: the summary endpoint %s did not finish its answer within %s (%s sets how long to wait)", ErrSource, where, timeout, SettingTimeout)
		}
		return "", "", fmt.Errorf("%w: reading the summary endpoint's answer: %v", ErrSource, err)
	}
	if len(answer) > maxAnswer {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered with more than %d MB", ErrSource, where, maxAnswer>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered %s: %s", ErrSource, where, resp.Status, errorText(answer))
	}
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return "", "", fmt.Errorf("%w: the summary endpoint %s did not answer with chat-completions JSON (%v): %s", ErrSource, where, err, preview(answer))
	}
	if len(out.Choices) == 0 {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered without choices: %s", ErrSource, where, preview(answer))
	}
	c := out.Choices[0]
	if c.Message.Refusal != "" {
		return "", "", fmt.Errorf("%w: the endpoint's model refused: %s", ErrSource, c.Message.Refusal)
	}
	if c.Message.Content == nil || strings.TrimSpace(*c.Message.Content) == "" {
		return "", "", fmt.Errorf("%w: the summary endpoint %s answered with no text (finish_reason %q)", ErrSource, where, c.FinishReason)
	}
	m := out.Model
	if m == "" {
		m = req.Model
	}
	return *c.Message.Content, m, nil
}

// errorText is what an endpoint's error answer says: its
// error.message when it is OpenAI's error JSON, else its start.
func errorText(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var msg struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &msg) == nil && msg.Message != "" {
			return msg.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	return preview(body)
}

// preview quotes the start of an answer.
func preview(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "(an empty body)"
	}
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:199]) + "…"
	}
	return strconv.Quote(s)
}
