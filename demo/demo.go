// Package demo seeds a sample thread for `weft demo`: a few hundred
// messages over several days of building a rate limiter, with tool calls,
// code, a long digression worth digesting, a misplaced message worth
// moving, and a few operations already applied. It is deterministic: the
// same thread every time.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"weft/formats"
	"weft/model"
	"weft/ops"
)

// Start is when the demo conversation begins.
var Start = time.Date(2026, 3, 2, 9, 12, 0, 0, time.UTC)

// Title is the demo session's title.
const Title = "Rate limiter for the API gateway"

// builder accumulates the thread with a clock that moves like a real
// working session: seconds between turns, minutes between tasks, nights
// between days.
type builder struct {
	r    *rand.Rand
	at   time.Time
	msgs []model.NewMessage
	call int
	// marks remember the indices of messages the seeded operations use.
	marks map[string][]int
}

func (b *builder) tick(min, max int) {
	b.at = b.at.Add(time.Duration(min+b.r.IntN(max-min+1)) * time.Second)
}

// mark records where the next message will be; end records the last one.
func (b *builder) mark(name string) { b.marks[name] = append(b.marks[name], len(b.msgs)) }
func (b *builder) end(name string)  { b.marks[name] = append(b.marks[name], len(b.msgs)-1) }

func (b *builder) add(role model.Role, content string) {
	b.msgs = append(b.msgs, model.NewMessage{Role: role, Content: strings.TrimSpace(content), CreatedAt: b.at})
}

func (b *builder) user(s string)      { b.tick(30, 240); b.add(model.RoleUser, s) }
func (b *builder) assistant(s string) { b.tick(5, 40); b.add(model.RoleAssistant, s) }

// tool adds an assistant tool call and its result.
func (b *builder) tool(text, name string, input map[string]any, output string) {
	b.call++
	id := fmt.Sprintf("call_%03d", b.call)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // commands have & and < in them
	_ = enc.Encode(input)
	in := bytes.TrimSpace(buf.Bytes())
	callParts := []model.Part{}
	if text != "" {
		callParts = append(callParts, model.Part{Type: model.PartText, Text: text})
	}
	callParts = append(callParts, model.Part{Type: model.PartToolCall, ToolCallID: id, ToolName: name, Input: in})
	b.tick(3, 20)
	b.msgs = append(b.msgs, model.NewMessage{Role: model.RoleAssistant, Content: formats.RenderContent(callParts), Parts: model.EncodeParts(callParts), CreatedAt: b.at})
	resParts := []model.Part{{Type: model.PartToolResult, ToolCallID: id, Text: strings.TrimSpace(output)}}
	b.tick(1, 15)
	b.msgs = append(b.msgs, model.NewMessage{Role: model.RoleTool, Name: name, Content: formats.RenderContent(resParts), Parts: model.EncodeParts(resParts), CreatedAt: b.at})
}

func (b *builder) nextDay(hour, minute int) {
	d := b.at.Add(24 * time.Hour)
	b.at = time.Date(d.Year(), d.Month(), d.Day(), hour, minute, 0, 0, time.UTC)
}

// Seed writes the demo session through the service and returns its ID.
func Seed(ctx context.Context, svc *ops.Service) (string, error) {
	b := &builder{r: rand.New(rand.NewPCG(2026, 3)), at: Start, marks: map[string][]int{}}
	script(b)

	res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: Title, Source: "demo"})
	if err != nil {
		return "", err
	}
	sid := res.SessionID
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: b.msgs}); err != nil {
		return "", err
	}
	id := func(i int) model.ItemID { return model.MessageID(uint64(i + 1)) }
	ids := func(from, to int) []model.ItemID {
		var out []model.ItemID
		for i := from; i <= to; i++ {
			out = append(out, id(i))
		}
		return out
	}
	agent := ops.WithAuthor(ctx, "claude-code")
	setup := b.marks["setup"]
	design := b.marks["design"]
	noisy := b.marks["noisy"][0]
	if _, err := svc.TagMessages(ctx, ops.TagArgs{Selection: ops.Selection{SessionID: sid, IDs: ids(design[0], design[1])}, Tags: []string{"design"}}); err != nil {
		return "", err
	}
	if _, err := svc.DigestMessages(agent, ops.DigestArgs{Selection: ops.Selection{SessionID: sid, IDs: ids(setup[0], setup[1])},
		Summary: "Set up the workspace: cloned the gateway, Go 1.26, `make test` green (212 tests), Redis 7 available on localhost for experiments."}); err != nil {
		return "", err
	}
	if _, err := svc.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{SessionID: sid, IDs: ids(noisy, noisy+1)}}); err != nil {
		return "", err
	}
	if _, err := svc.InsertMessages(agent, ops.InsertArgs{SessionID: sid, AfterID: id(b.marks["decision"][0]),
		Messages: []model.NewMessage{{Role: model.RoleAssistant, Content: "(Context for later turns: limits are per API key, not per client IP — see the user's clarification on day 2.)"}}}); err != nil {
		return "", err
	}
	return sid, nil
}

// Digression returns the index range (inclusive) of the demo's long
// digression and the index of its misplaced message, for tours and tests.
func Digression() (from, to, misplaced int) {
	b := &builder{r: rand.New(rand.NewPCG(2026, 3)), at: Start, marks: map[string][]int{}}
	script(b)
	d := b.marks["digression"]
	return d[0], d[1], b.marks["misplaced"][0]
}
