package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"weft/ops/memory"
)

// upstreamWriter is the memory policy's "upstream" summarizer for a
// request in flight: it asks the request's own provider, with the
// request's credentials (held in this closure for the summaries that
// request's check asks for, never stored), in the API the request
// speaks; the model is the policy's, else the request's.
func (p *Handler) upstreamWriter(r *http.Request, api API, requestModel string) memory.Writer {
	header := http.Header{}
	copyRequestHeaders(header, r.Header)
	header.Del("Content-Length")
	header.Del("Accept-Encoding")
	header.Set("Content-Type", "application/json")
	return func(ctx context.Context, instructions, transcript string, maxTokens int) (string, string, error) {
		byModel := requestModel
		if m := memory.PolicyModel(ctx); m != "" {
			byModel = m
		}
		var url string
		var body any
		switch api {
		case Anthropic:
			url = p.anthropic + "/v1/messages"
			body = map[string]any{
				"model": byModel, "max_tokens": maxTokens, "system": instructions,
				"messages": []map[string]any{{"role": "user", "content": transcript}},
			}
		case Responses:
			url = p.openai + "/responses"
			body = map[string]any{"model": byModel, "instructions": instructions, "input": transcript, "max_output_tokens": maxTokens, "store": false}
		default:
			url = p.openai + "/chat/completions"
			body = map[string]any{
				"model": byModel, "max_tokens": maxTokens,
				"messages": []map[string]any{{"role": "system", "content": instructions}, {"role": "user", "content": transcript}},
			}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return "", "", err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
		if err != nil {
			return "", "", err
		}
		req.Header = header.Clone()
		resp, err := p.client.Do(req)
		if err != nil {
			return "", "", fmt.Errorf("the upstream %s did not answer: %w", upstreamHost(url), err)
		}
		defer func() { _ = resp.Body.Close() }()
		out, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if err != nil {
			return "", "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", "", fmt.Errorf("the upstream %s answered %s", upstreamHost(url), resp.Status)
		}
		return summaryText(api, out)
	}
}

// summaryText is the text and model of a provider's answer.
func summaryText(api API, b []byte) (string, string, error) {
	var a struct {
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return "", "", fmt.Errorf("the upstream's answer is not the %s API's JSON: %w", api, err)
	}
	var text strings.Builder
	switch api {
	case Anthropic:
		for _, c := range a.Content {
			if c.Type == "text" {
				text.WriteString(c.Text)
			}
		}
	case Responses:
		for _, o := range a.Output {
			for _, c := range o.Content {
				if c.Type == "output_text" {
					text.WriteString(c.Text)
				}
			}
		}
	default:
		if len(a.Choices) > 0 {
			text.WriteString(a.Choices[0].Message.Content)
		}
	}
	return text.String(), a.Model, nil
}
