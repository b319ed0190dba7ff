package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"weft/internal/english"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
)

// Made is an operation a check made.
type Made struct {
	OperationID string       `json:"operation_id"`
	OpType      model.OpType `json:"op_type"`
	Rule        string       `json:"rule"`
	Items       int          `json:"items"`
	// TokensBefore is what the items counted; TokensAfter what stands
	// in their place.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	// Source says what wrote a digest's summary (extractive, endpoint,
	// upstream).
	Source string `json:"summary_source,omitempty"`
}

// CheckResult is what a check did to a session.
type CheckResult struct {
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	// Policy says whether the session has one: without, nothing is done.
	Policy bool   `json:"policy"`
	Made   []Made `json:"made"`
	// TokensBefore and TokensAfter are the effective thread's tokens.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
}

// kinds remembers what each stored message is to a turn (a prompt, only
// tool results, or neither), by session: stored messages never change,
// so each is read once.
type kinds struct {
	mu sync.Mutex
	by map[string][]kind
}

type kind uint8

const (
	kindUnknown kind = iota
	kindPrompt
	kindToolResult
	kindOther
)

type kindsKey struct{}

func kindsOf(s *ops.Service) *kinds {
	return s.Keep(kindsKey{}, func() any { return &kinds{by: map[string][]kind{}} }).(*kinds)
}

// kindOf is what a message is to a turn.
func kindOf(role model.Role, parts []model.Part) kind {
	switch role {
	case model.RoleTool:
		return kindToolResult
	case model.RoleUser:
	default:
		return kindOther
	}
	if len(parts) == 0 {
		return kindPrompt
	}
	for _, p := range parts {
		if p.Type != model.PartToolResult {
			return kindPrompt
		}
	}
	return kindToolResult
}

// storedKinds returns the kinds of a session's stored messages 1..n,
// reading those it has not seen: user messages with parts (a head says
// the rest).
func (k *kinds) storedKinds(s *ops.Service, snap ops.Snapshot) ([]kind, error) {
	id := snap.Info.ID
	k.mu.Lock()
	known := k.by[id]
	k.mu.Unlock()
	heads := snap.Heads
	if len(known) >= len(heads) {
		return known[:len(heads)], nil
	}
	out := make([]kind, len(heads))
	copy(out, known)
	var read []uint64
	for i := len(known); i < len(heads); i++ {
		h := heads[i]
		role := model.RoleFromCode(h.Role)
		switch {
		case role == model.RoleUser && h.Flags&model.HeadHasParts != 0:
			read = append(read, uint64(i+1))
		case role == model.RoleUser:
			out[i] = kindPrompt
		case role == model.RoleTool:
			out[i] = kindToolResult
		default:
			out[i] = kindOther
		}
	}
	if len(read) > 0 {
		msgs, err := s.Messages(id, read)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			out[m.Seq-1] = kindOf(m.Role, model.DecodeParts(m.Parts))
		}
	}
	k.mu.Lock()
	if len(k.by[id]) < len(out) {
		k.by[id] = out
	}
	k.mu.Unlock()
	return out, nil
}

// items describes the snapshot's effective thread for Plan (none for a
// session not made yet).
func items(s *ops.Service, snap ops.Snapshot) ([]Item, error) {
	if snap.View == nil {
		return nil, nil
	}
	stored, err := kindsOf(s).storedKinds(s, snap)
	if err != nil {
		return nil, err
	}
	v := snap.View
	authors := make(map[string]*model.Op, len(snap.Ops))
	for i := range snap.Ops {
		authors[snap.Ops[i].ID] = &snap.Ops[i]
	}
	out := make([]Item, len(v.Items))
	for i, it := range v.Items {
		o := &out[i]
		o.ID = v.ID(it)
		if it.Seq > 0 {
			h := snap.Heads[it.Seq-1]
			o.Role, o.Tokens = model.RoleFromCode(h.Role), int(h.Tokens)
			o.Prompt, o.ToolResult = stored[it.Seq-1] == kindPrompt, stored[it.Seq-1] == kindToolResult
			continue
		}
		sy := v.Synth[it.Synth]
		o.Role, o.Tokens, o.Summary, o.Op = sy.Role, sy.Tokens, sy.Summary, sy.OpID
		k := kindOf(sy.Role, model.DecodeParts(sy.Parts))
		o.Prompt, o.ToolResult = k == kindPrompt && !sy.Summary, k == kindToolResult
		if op := authors[sy.OpID]; op != nil {
			o.Author, o.Rule = op.Author, op.Rule
			if sy.Summary {
				o.Turns = op.Turns
			}
		}
	}
	return out, nil
}

// Check brings session ref within its memory policy now: it plans (Plan)
// and makes the operations, authored model.MemoryAuthor with their rule.
// A session without a policy is left as it is. An operation refused
// because the thread changed under it (an agent's edit of the same
// items) is left for the next check.
func Check(ctx context.Context, s *ops.Service, ref string) (CheckResult, error) {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return CheckResult{}, err
	}
	res := CheckResult{SessionID: snap.Info.ID, Version: snap.Info.Version, TokensBefore: snap.View.Tokens, TokensAfter: snap.View.Tokens}
	p := snap.Info.Memory
	if p == nil {
		return res, nil
	}
	res.Policy = true
	its, err := items(s, snap)
	if err != nil {
		return res, err
	}
	w := writerFor(ctx, s, p)
	acts := Plan(its, *p, snap.Ops)
	if len(acts) == 0 {
		if w != nil {
			prepare(ctx, s, w, snap, its)
		}
		return res, nil
	}
	mctx := ops.WithAuthor(ctx, model.MemoryAuthor)
	version := snap.Info.Version
	for _, a := range acts {
		made, err := make1(ops.WithRule(mctx, ops.Rule{Name: a.Rule, Turns: a.Turns}), s, snap, a, its, version)
		if errors.Is(err, ops.ErrConflict) {
			continue
		}
		if err != nil {
			return res, err
		}
		res.Made = append(res.Made, made)
		if w != nil && made.Source == ops.SourceExtractive {
			// The extractive summary stands in until the model's is
			// written.
			replace(ctx, s, w, snap, a, made)
		}
	}
	after, err := s.Snapshot(snap.Info.ID)
	if err != nil {
		return res, err
	}
	res.Version, res.TokensAfter = after.Info.Version, after.View.Tokens
	if w != nil {
		if its, err := items(s, after); err == nil {
			prepare(ctx, s, w, after, its)
		}
	}
	return res, nil
}

// make1 makes one action.
func make1(ctx context.Context, s *ops.Service, snap ops.Snapshot, a Action, its []Item, version uint64) (Made, error) {
	sel := ops.Selection{SessionID: snap.Info.ID, IDs: a.Targets}
	opts := ops.EditOptions{ExpectedVersion: &version}
	made := Made{OpType: a.Type, Rule: a.Rule, Items: len(a.Targets), TokensBefore: a.Tokens}
	switch a.Type {
	case model.OpDigest:
		if ps, ok := writingOf(s).take(snap.Info.ID, a.Targets); ok {
			// A model's summary written ahead: no one waited for it.
			rule := ops.RuleFrom(ctx)
			rule.Source, rule.Model = ps.source, ps.model
			r, err := s.DigestMessages(ops.WithRule(ctx, rule), ops.DigestArgs{Selection: sel, Summary: ps.text, EditOptions: opts})
			if err != nil {
				return made, err
			}
			made.OperationID, made.Source, made.TokensAfter = r.OperationID, ps.source, tokens.Count(ps.text)
			return made, nil
		}
		n := summaryEstimate(a.Turns)
		r, err := s.SummarizeMessageRange(ctx, ops.SummarizeArgs{Selection: sel, Store: true, MaxTokens: &n, Source: ops.SourceExtractive, EditOptions: opts})
		if err != nil {
			return made, err
		}
		made.OperationID, made.TokensAfter, made.Source = r.OperationID, r.Tokens, r.Source
	case model.OpRevise:
		stub, err := stubOf(s, snap, its[a.First])
		if err != nil {
			return made, err
		}
		r, err := s.ReviseMessages(ctx, ops.ReviseArgs{Selection: sel, Replacements: []model.NewMessage{stub}, EditOptions: opts})
		if err != nil {
			return made, err
		}
		made.OperationID = r.OperationID
		made.TokensAfter = stub.Tokens
	case model.OpSnip:
		r, err := s.SnipMessages(ctx, ops.SnipArgs{Selection: sel, EditOptions: opts})
		if err != nil {
			return made, err
		}
		made.OperationID = r.OperationID
	default:
		return made, fmt.Errorf("memory: no way to make a %s", a.Type)
	}
	return made, nil
}

// stubOf is what stands for a tool output the policy sets aside: the
// same message, its results' text replaced by a line that says what it
// was and how to read it back; the tool calls they answer stay paired.
func stubOf(s *ops.Service, snap ops.Snapshot, it Item) (model.NewMessage, error) {
	seq, ok := it.ID.Seq()
	if !ok {
		return model.NewMessage{}, fmt.Errorf("memory: %s is not a stored message", it.ID)
	}
	msgs, err := s.Messages(snap.Info.ID, []uint64{seq})
	if err != nil {
		return model.NewMessage{}, err
	}
	if len(msgs) != 1 {
		return model.NewMessage{}, fmt.Errorf("memory: message %s is not stored", it.ID)
	}
	m := msgs[0]
	text := fmt.Sprintf("[weft memory: a tool output of %s tokens (%s lines) was set aside; read it whole with get_message_range view=raw start_idx=%d end_idx=%d]",
		english.Thousands(it.Tokens), english.Thousands(strings.Count(m.Content, "\n")+1), seq-1, seq-1)
	parts := model.DecodeParts(m.Parts)
	for i := range parts {
		if parts[i].Type == model.PartToolResult {
			parts[i].Text, parts[i].Raw = text, nil
		}
	}
	return model.NewMessage{Role: m.Role, Name: m.Name, Content: text, Parts: model.EncodeParts(parts), CreatedAt: m.CreatedAt, Tokens: tokens.Count(text)}, nil
}

// Keep is the service option that keeps every session within its
// memory policy by itself: after each write that adds messages, the
// session is checked (Check) before the write returns. A check that
// fails is logged; the write stands.
func Keep() ops.Option {
	return ops.WithAfterAppend(func(ctx context.Context, s *ops.Service, sid string) {
		if _, err := Check(ctx, s, sid); err != nil {
			s.Logger().Warn("memory policy check failed", "session", sid, "err", err)
		}
	})
}

// WouldAct reports whether the session snap shows, with the messages
// fresh added after it, is past its policy: a check would change it.
// The context proxy asks before it sends a request upstream, and waits
// for the check only then, so that the request that crosses a threshold
// already goes within it and every other goes at once.
func WouldAct(s *ops.Service, snap ops.Snapshot, fresh []ops.CallerMessage) (bool, error) {
	p := snap.Info.Memory
	if p == nil {
		return false, nil
	}
	its, err := items(s, snap)
	if err != nil {
		return false, err
	}
	seq := uint64(snap.Info.MessageCount)
	for _, m := range fresh {
		seq++
		k := kindOf(m.Message.Role, m.Parts)
		its = append(its, Item{ID: model.MessageID(seq), Role: m.Message.Role, Tokens: m.Message.Tokens, Prompt: k == kindPrompt, ToolResult: k == kindToolResult})
	}
	return len(Plan(its, *p, snap.Ops)) > 0, nil
}
