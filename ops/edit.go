package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"weft/internal/english"
	"weft/internal/tokens"

	"weft/model"
	"weft/store"
)

// Selection names the items an edit acts on: an inclusive index range in
// the effective thread, or item IDs.
type Selection struct {
	SessionID string         `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	StartIdx  *int           `json:"start_idx,omitempty" jsonschema:"first index of the range, 0-based in the effective thread"`
	EndIdx    *int           `json:"end_idx,omitempty" jsonschema:"last index of the range (inclusive)"`
	IDs       []model.ItemID `json:"ids,omitempty" jsonschema:"item IDs instead of a range (m12 for a stored message, <op-id>/<k> for a synthetic one), or tag:NAME for every item of the effective thread that carries the tag NAME (case ignored); a list that mixes them selects the union, in thread order. A tag no item carries is refused"`
}

// EditOptions are accepted by every editing tool.
type EditOptions struct {
	WhenTags        []string `json:"when_tags,omitempty" jsonschema:"apply the operation only while all these tags are active in the session"`
	ExpectedVersion *uint64  `json:"expected_version,omitempty" jsonschema:"the session's version when the items were chosen (it changes on every write). With start_idx/end_idx (or new_order, after_idx) any change since refuses the edit. With ids (or after_id) only a change to the named items does: they must all still be in the effective thread, standing together, and no operation made since may act on them (a digest, snip, revise, tag or move of one of them, or an insert among them); other changes let the edit go through on exactly those items. With a tag:NAME among the ids, any change since refuses the edit, as with a range (what carries a tag may have changed). A refusal says what changed"`
}

// OpResult is the result of an editing tool.
type OpResult struct {
	OperationID string `json:"operation_id"`
	Version     uint64 `json:"version"`
}

// resolved is a selection checked against a view.
type resolved struct {
	targets    []model.ItemID // in thread order
	first, end int            // index range (first..end); contiguous reports first..end
	contiguous bool
}

func (r resolved) describe() string {
	if r.contiguous {
		if r.first == r.end {
			return english.Thousands(r.first)
		}
		return english.Thousands(r.first) + "–" + english.Thousands(r.end)
	}
	return english.Count(len(r.targets), "item")
}

func (sel Selection) resolve(v *model.View) (resolved, error) {
	n := v.Len()
	hasRange := sel.StartIdx != nil || sel.EndIdx != nil
	switch {
	case hasRange && len(sel.IDs) > 0:
		return resolved{}, Invalidf("give either start_idx/end_idx or ids, not both")
	case !hasRange && len(sel.IDs) == 0:
		return resolved{}, Invalidf("nothing selected: give start_idx and end_idx (inclusive, 0-based in the effective thread of %s) or ids", english.Count(n, "item"))
	case len(sel.IDs) > 0:
		return resolveIDs(v, sel.IDs)
	case sel.StartIdx == nil:
		return resolved{}, Invalidf("start_idx is missing: ranges are inclusive, start_idx..end_idx")
	case sel.EndIdx == nil:
		return resolved{}, Invalidf("end_idx is missing: ranges are inclusive, start_idx..end_idx")
	}
	start, end := *sel.StartIdx, *sel.EndIdx
	if err := CheckRange(start, end, n); err != nil {
		return resolved{}, err
	}
	r := resolved{first: start, end: end, contiguous: true, targets: make([]model.ItemID, 0, end-start+1)}
	for i := start; i <= end; i++ {
		r.targets = append(r.targets, v.ID(v.Items[i]))
	}
	return r, nil
}

// CheckRange validates an inclusive index range over n items given as
// start_idx and end_idx.
func CheckRange(start, end, n int) error {
	return CheckRangeAs("start_idx", "end_idx", start, end, n)
}

// CheckRangeAs is checkRange for arguments with other names.
func CheckRangeAs(startName, endName string, start, end, n int) error {
	switch {
	case n == 0:
		return Invalidf("the thread is empty: there is no index %d", start)
	case start < 0:
		return Invalidf("%s %d is negative; indices run 0..%d", startName, start, n-1)
	case end < 0:
		return Invalidf("%s %d is negative; indices run 0..%d", endName, end, n-1)
	case start >= n:
		return Invalidf("%s %d is past the end of the thread (%s: 0..%d)", startName, start, english.Count(n, "item"), n-1)
	case end >= n:
		return Invalidf("%s %d is past the end of the thread (%s: 0..%d)", endName, end, english.Count(n, "item"), n-1)
	case start > end:
		return Invalidf("%s %d is after %s %d; ranges are inclusive, %s <= %s", startName, start, endName, end, startName, endName)
	}
	return nil
}

func resolveIDs(v *model.View, ids []model.ItemID) (resolved, error) {
	idx, err := expandIDs(v, ids)
	if err != nil {
		return resolved{}, err
	}
	slices.Sort(idx)
	r := resolved{first: idx[0], end: idx[len(idx)-1], contiguous: idx[len(idx)-1]-idx[0] == len(idx)-1}
	for _, j := range idx {
		r.targets = append(r.targets, v.ID(v.Items[j]))
	}
	return r, nil
}

// validTag checks a tag: a word without spaces, so tags stay easy to type
// and to show.
func validTag(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("a tag is empty")
	case len(t) > 64:
		return fmt.Errorf("tag %q is longer than 64 bytes", t[:64]+"…")
	case strings.IndexFunc(t, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("tag %q has a space, comma or control character; use letters, digits and -_.:/", t)
	}
	return nil
}

func validTags(field string, tags []string, allowEmpty bool) ([]string, error) {
	if len(tags) == 0 && !allowEmpty {
		return nil, Invalidf("%s is empty: give at least one tag", field)
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if err := validTag(t); err != nil {
			return nil, Invalidf("%s: %v", field, err)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func validMessages(field string, msgs []model.NewMessage) ([]model.NewMessage, error) {
	out := make([]model.NewMessage, len(msgs))
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return nil, Invalidf("%s[%d]: %v", field, i, err)
		}
		if !m.CreatedAt.IsZero() {
			m.CreatedAt = m.CreatedAt.UTC()
		}
		if len(m.Parts) == 0 && len(m.ReadParts) > 0 {
			// An operation's messages are kept as JSON in its record:
			// parts as read are written out.
			m.Parts = model.MarshalParts(m.ReadParts)
		}
		m.ReadParts = nil
		out[i] = m
	}
	CountEach(len(out), func(i int) *model.NewMessage { return &out[i] })
	return out, nil
}

// newOp records an operation made against a selection. named are the
// items the request names by ID (its ids, an insert's after_id): with
// them, a stale expected version is checked against what changed since
// (checkNamed), not refused outright.
func (s *Service) newOp(ctx context.Context, typ model.OpType, sel Selection, named []model.ItemID, o EditOptions, fill func(v *model.View, r resolved, op *model.Op) (string, error)) (OpResult, error) {
	when, err := validTags("when_tags", o.WhenTags, true)
	if err != nil {
		return OpResult{}, err
	}
	if sel.StartIdx != nil || sel.EndIdx != nil || selectsByTag(named) {
		// A range as well: resolve refuses the request. A tag: the
		// items it selects are the thread's now, so any change since
		// the version given refuses the edit.
		named = nil
	}
	strict := o.ExpectedVersion
	if len(named) > 0 {
		strict = nil
	}
	var op model.Op
	info, err := s.Write(ctx, sel.SessionID, strict, func(_ store.Tx, th *Thread, next *model.Session) (*Change, error) {
		v := th.View()
		if len(named) > 0 {
			if err := checkNamed(&th.Info, th.Ops, v, o.ExpectedVersion, named); err != nil {
				return nil, err
			}
		}
		var r resolved
		if typ != model.OpInsert && typ != model.OpResequence {
			if r, err = sel.resolve(v); err != nil {
				return nil, err
			}
		}
		now := s.Clock()
		rule := RuleFrom(ctx)
		op = model.Op{
			ID: s.ids.next(now), Type: typ, Targets: r.targets, WhenTags: when,
			Active: true, CreatedAt: now, Author: AuthorFrom(ctx), Rule: rule.Name, Turns: rule.Turns,
		}
		what, err := fill(v, r, &op)
		if err != nil {
			return nil, err
		}
		if rule.Source != "" {
			op.Payload.SummarySource, op.Payload.SummaryModel = rule.Source, rule.Model
		}
		next.OpCount++
		return &Change{
			What: what,
			Op:   &op,
			Apply: func(th *Thread) {
				th.Ops = append(th.Ops, op)
				th.view = nil
			},
			Event: Event{Kind: EventOpCreated},
		}, nil
	})
	if err != nil {
		return OpResult{}, err
	}
	return OpResult{OperationID: op.ID, Version: info.Version}, nil
}

// TagArgs are tag_messages' arguments.
type TagArgs struct {
	Selection
	Tags []string `json:"tags" jsonschema:"tags to attach to the selected items"`
	EditOptions
}

// TagResult is tag_messages' result.
type TagResult struct {
	Success      bool   `json:"success"`
	TagCount     int    `json:"tag_count"`
	MessageCount int    `json:"message_count"`
	OperationID  string `json:"operation_id"`
	Version      uint64 `json:"version"`
}

// TagMessages attaches tags to items.
func (s *Service) TagMessages(ctx context.Context, a TagArgs) (TagResult, error) {
	tags, err := validTags("tags", a.Tags, false)
	if err != nil {
		return TagResult{}, err
	}
	var count int
	res, err := s.newOp(ctx, model.OpTag, a.Selection, a.IDs, a.EditOptions, func(_ *model.View, r resolved, op *model.Op) (string, error) {
		op.Payload.Tags = tags
		count = len(r.targets)
		return fmt.Sprintf("tag %s on %s", strings.Join(tags, ","), r.describe()), nil
	})
	if err != nil {
		return TagResult{}, err
	}
	return TagResult{Success: true, TagCount: len(tags), MessageCount: count, OperationID: res.OperationID, Version: res.Version}, nil
}

// DigestArgs are digest_messages' arguments.
type DigestArgs struct {
	Selection
	Summary string `json:"summary" jsonschema:"the summary that replaces the selected items"`
	EditOptions
}

// DigestMessages collapses items into one summary.
func (s *Service) DigestMessages(ctx context.Context, a DigestArgs) (OpResult, error) {
	return s.digest(ctx, a, "", "")
}

// digest is DigestMessages recording what wrote the summary (a source
// of summarize_message_range and its model; "" for a summary given).
func (s *Service) digest(ctx context.Context, a DigestArgs, source, byModel string) (OpResult, error) {
	summary := strings.TrimSpace(a.Summary)
	if summary == "" {
		return OpResult{}, Invalidf("summary is empty: a digest replaces the range with its summary, so write one")
	}
	n := tokens.Count(summary)
	return s.newOp(ctx, model.OpDigest, a.Selection, a.IDs, a.EditOptions, func(_ *model.View, r resolved, op *model.Op) (string, error) {
		op.Payload.Summary, op.Payload.SummaryTokens = summary, n
		op.Payload.SummarySource, op.Payload.SummaryModel = source, byModel
		return "digest of " + r.describe(), nil
	})
}

// ReviseArgs are revise_messages' arguments.
type ReviseArgs struct {
	Selection
	Replacements []model.NewMessage `json:"replacements" jsonschema:"messages that replace the selected items; may be empty"`
	EditOptions
}

// ReviseMessages replaces items with other messages.
func (s *Service) ReviseMessages(ctx context.Context, a ReviseArgs) (OpResult, error) {
	msgs, err := validMessages("replacements", a.Replacements)
	if err != nil {
		return OpResult{}, err
	}
	return s.newOp(ctx, model.OpRevise, a.Selection, a.IDs, a.EditOptions, func(_ *model.View, r resolved, op *model.Op) (string, error) {
		op.Payload.Messages = msgs
		return fmt.Sprintf("revise of %s into %s", r.describe(), english.Count(len(msgs), "message")), nil
	})
}

// SnipArgs are snip_messages' arguments.
type SnipArgs struct {
	Selection
	EditOptions
}

// SnipMessages removes items.
func (s *Service) SnipMessages(ctx context.Context, a SnipArgs) (OpResult, error) {
	return s.newOp(ctx, model.OpSnip, a.Selection, a.IDs, a.EditOptions, func(_ *model.View, r resolved, _ *model.Op) (string, error) {
		return "snip of " + r.describe(), nil
	})
}

// ResequenceArgs are resequence_messages' arguments.
type ResequenceArgs struct {
	SessionID string         `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	NewOrder  []int          `json:"new_order,omitempty" jsonschema:"indices of the items to reorder, in their new order: their positions, sorted, are refilled in this order (e.g. [8,9,5,6,7] moves 8 and 9 before 5)"`
	IDs       []model.ItemID `json:"ids,omitempty" jsonschema:"item IDs in their new order, instead of new_order; tag:NAME stands for the items carrying the tag NAME (case ignored), in thread order, at its place in the list (an item named already keeps its first place)"`
	EditOptions
}

// ResequenceMessages reorders items: the positions of the named items,
// sorted, are refilled with them in the new order.
func (s *Service) ResequenceMessages(ctx context.Context, a ResequenceArgs) (OpResult, error) {
	if len(a.NewOrder) > 0 && len(a.IDs) > 0 {
		return OpResult{}, Invalidf("give either new_order or ids, not both")
	}
	return s.newOp(ctx, model.OpResequence, Selection{SessionID: a.SessionID}, nil, a.EditOptions, func(v *model.View, _ resolved, op *model.Op) (string, error) {
		order := a.NewOrder
		if len(a.IDs) > 0 {
			var err error
			if order, err = expandIDs(v, a.IDs); err != nil {
				return "", err
			}
		}
		if len(order) < 2 {
			return "", Invalidf("new_order needs at least two items to reorder (got %d)", len(order))
		}
		seen := make(map[int]bool, len(order))
		for _, i := range order {
			if i < 0 || i >= v.Len() {
				return "", Invalidf("new_order has index %d, outside the thread (%s: 0..%d)", i, english.Count(v.Len(), "item"), v.Len()-1)
			}
			if seen[i] {
				return "", Invalidf("new_order repeats index %d: name each item once", i)
			}
			seen[i] = true
		}
		if slices.IsSorted(order) {
			return "", Invalidf("new_order %v leaves every item where it is: list the items in the order you want them", order)
		}
		op.Targets = make([]model.ItemID, len(order))
		for k, i := range order {
			op.Targets[k] = v.ID(v.Items[i])
		}
		return resequenceWhat(order), nil
	})
}

// resequenceWhat says what a new order does: a move, when it takes one
// item elsewhere and leaves the others in their order, else a
// resequence. The items it names are by index before the change.
func resequenceWhat(order []int) string {
	pos := slices.Sorted(slices.Values(order)) // the places the items fill
	i, j := 0, len(order)-1
	for i < len(order) && order[i] == pos[i] {
		i++
	}
	for j > i && order[j] == pos[j] {
		j--
	}
	if i < j {
		moved, to := -1, 0
		switch {
		case order[i] == pos[j] && slices.Equal(order[i+1:j+1], pos[i:j]): // pos[j] moved up to i
			moved, to = pos[j], pos[i]
		case order[j] == pos[i] && slices.Equal(order[i:j], pos[i+1:j+1]): // pos[i] moved down to j
			moved, to = pos[i], pos[j]
		}
		if moved >= 0 {
			dir, n := "down", to-moved
			if n < 0 {
				dir, n = "up", -n
			}
			return fmt.Sprintf("move of item %s %s %s", english.Thousands(moved), dir, english.Count(n, "place"))
		}
	}
	return fmt.Sprintf("resequence of %s", english.Count(len(order), "item"))
}

// InsertArgs are insert_messages' arguments.
type InsertArgs struct {
	SessionID string             `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	AfterIdx  *int               `json:"after_idx,omitempty" jsonschema:"insert after this index; -1 inserts at the start"`
	AfterID   model.ItemID       `json:"after_id,omitempty" jsonschema:"insert after this item, instead of after_idx"`
	Messages  []model.NewMessage `json:"messages" jsonschema:"the messages to insert, each with role and content"`
	EditOptions
}

// InsertMessages puts synthetic messages after an item or at the start.
func (s *Service) InsertMessages(ctx context.Context, a InsertArgs) (OpResult, error) {
	if len(a.Messages) == 0 {
		return OpResult{}, Invalidf("messages is empty: give at least one {role, content} to insert")
	}
	msgs, err := validMessages("messages", a.Messages)
	if err != nil {
		return OpResult{}, err
	}
	if a.AfterIdx != nil && a.AfterID != "" {
		return OpResult{}, Invalidf("give either after_idx or after_id, not both")
	}
	if a.AfterIdx == nil && a.AfterID == "" {
		return OpResult{}, Invalidf("where? give after_idx (-1 for the start) or after_id")
	}
	var named []model.ItemID
	if a.AfterID != "" {
		named = []model.ItemID{a.AfterID}
	}
	return s.newOp(ctx, model.OpInsert, Selection{SessionID: a.SessionID}, named, a.EditOptions, func(v *model.View, _ resolved, op *model.Op) (string, error) {
		var after int
		if a.AfterID != "" {
			if after = v.IndexOf(a.AfterID); after < 0 {
				return "", NotFoundf("after_id %q is not in the effective thread: it does not exist or an operation hides it", a.AfterID)
			}
		} else {
			after = *a.AfterIdx
			if after < -1 || after >= v.Len() {
				return "", Invalidf("after_idx %d is outside the thread: use -1 for the start or 0..%d", after, v.Len()-1)
			}
		}
		if after >= 0 {
			op.Anchor = v.ID(v.Items[after])
		}
		op.Payload.Messages = msgs
		if after < 0 {
			return fmt.Sprintf("insert of %s at the start", english.Count(len(msgs), "message")), nil
		}
		return fmt.Sprintf("insert of %s after %d", english.Count(len(msgs), "message"), after), nil
	})
}

// OperationArgs name one operation.
type OperationArgs struct {
	OperationID     string  `json:"operation_id" jsonschema:"the operation's ID, from list_operations or the tool that made it"`
	SessionID       string  `json:"session_id,omitempty" jsonschema:"the session; found from the operation when omitted"`
	ExpectedVersion *uint64 `json:"expected_version,omitempty" jsonschema:"refuse the change if the session's version is not this one"`
}

// ToggleArgs are toggle_operation's arguments.
type ToggleArgs struct {
	OperationArgs
	Active *bool `json:"active" jsonschema:"true to switch the operation on, false to switch it off"`
}

// SuccessResult is the result of revert_operation and toggle_operation.
type SuccessResult struct {
	Success bool           `json:"success"`
	Version uint64         `json:"version"`
	Status  model.OpStatus `json:"status"`
	// StillStanding are the later operations made over what this one
	// made (a revise of its summary): with this one off or reverted they
	// stand over the items it had replaced.
	StillStanding []StandingOp `json:"still_standing,omitempty"`
}

// StandingOp is a later operation that stays when an earlier one it was
// made over goes: it now stands over Over, the earlier one's targets.
type StandingOp struct {
	OperationID string         `json:"operation_id"`
	OpType      model.OpType   `json:"op_type"`
	Author      string         `json:"author"`
	Over        []model.ItemID `json:"over"`
}

// standing lists the active operations after ops[i] made over what it
// made.
func standing(ops []model.Op, i int) []StandingOp {
	var out []StandingOp
	for _, later := range ops[i+1:] {
		if later.Active && !later.Reverted() && model.Over(later.Targets, ops[i].ID) {
			out = append(out, StandingOp{OperationID: later.ID, OpType: later.Type, Author: later.Author, Over: slices.Clone(ops[i].Targets)})
		}
	}
	return out
}

// RevertOperation reverts an operation for good: it stops applying, and
// stays in the record. Later operations made over what it made stay
// (DESIGN: a target that is a synthetic item stands for what its
// operation replaced): a revise of its summary then stands over the
// items the summary had replaced. The result names them.
func (s *Service) RevertOperation(ctx context.Context, a OperationArgs) (SuccessResult, error) {
	return s.changeOp(ctx, a, func(op *model.Op) (string, error) {
		if op.Reverted() {
			return "", Invalidf("operation %s was already reverted at %s", op.ID, FormatTime(*op.RevertedAt))
		}
		t := s.Clock()
		op.RevertedAt = &t
		return fmt.Sprintf("revert of %s %s", op.Type, op.ID), nil
	})
}

// RestoreOperation undoes a revert (the TUI's redo).
func (s *Service) RestoreOperation(ctx context.Context, a OperationArgs) (SuccessResult, error) {
	return s.changeOp(ctx, a, func(op *model.Op) (string, error) {
		if !op.Reverted() {
			return "", Invalidf("operation %s is not reverted; there is nothing to restore", op.ID)
		}
		op.RevertedAt = nil
		return fmt.Sprintf("restore of %s %s", op.Type, op.ID), nil
	})
}

// ToggleOperation switches an operation on or off.
func (s *Service) ToggleOperation(ctx context.Context, a ToggleArgs) (SuccessResult, error) {
	if a.Active == nil {
		return SuccessResult{}, Invalidf("active is missing: true switches the operation on, false off")
	}
	return s.changeOp(ctx, a.OperationArgs, func(op *model.Op) (string, error) {
		if op.Reverted() {
			return "", Invalidf("operation %s was reverted at %s; a reverted operation cannot be switched on or off", op.ID, FormatTime(*op.RevertedAt))
		}
		if op.Active == *a.Active {
			return "", nil // already so: nothing to write
		}
		op.Active = *a.Active
		if op.Active {
			return fmt.Sprintf("%s %s switched on", op.Type, op.ID), nil
		}
		return fmt.Sprintf("%s %s switched off", op.Type, op.ID), nil
	})
}

// changeOp updates one stored operation; edit returns "" for no change.
func (s *Service) changeOp(ctx context.Context, a OperationArgs, edit func(op *model.Op) (string, error)) (SuccessResult, error) {
	if a.OperationID == "" {
		return SuccessResult{}, Invalidf("operation_id is empty: list_operations shows the operations")
	}
	ref := a.SessionID
	if ref == "" {
		err := s.st.View(func(tx store.Tx) error {
			var err error
			ref, err = tx.OpSession(a.OperationID)
			return err
		})
		if err != nil {
			return SuccessResult{}, NotFoundf("operation %q not found: list_operations shows the operations", a.OperationID)
		}
	}
	var status model.OpStatus
	var still []StandingOp
	info, err := s.Write(ctx, ref, a.ExpectedVersion, func(_ store.Tx, th *Thread, next *model.Session) (*Change, error) {
		i := slices.IndexFunc(th.Ops, func(o model.Op) bool { return o.ID == a.OperationID })
		if i < 0 {
			return nil, NotFoundf("operation %q not found in session %s", a.OperationID, th.Info.ID)
		}
		op := th.Ops[i]
		op.Targets, op.WhenTags = slices.Clone(op.Targets), slices.Clone(op.WhenTags)
		what, err := edit(&op)
		if err != nil || what == "" {
			status = th.View().Status[op.ID]
			if err == nil && (!op.Active || op.Reverted()) {
				still = standing(th.Ops, i)
			}
			return nil, err
		}
		if !op.Active || op.Reverted() {
			still = standing(th.Ops, i)
		}
		return &Change{
			What: what,
			Op:   &op,
			Apply: func(th *Thread) {
				th.Ops = slices.Clone(th.Ops)
				th.Ops[i] = op
				th.view = nil
				status = th.View().Status[op.ID]
			},
			Event: Event{Kind: EventOpChanged},
		}, nil
	})
	if err != nil {
		return SuccessResult{}, err
	}
	return SuccessResult{Success: true, Version: info.Version, Status: status, StillStanding: still}, nil
}

// SetActiveTagsArgs are set_active_tags' arguments.
type SetActiveTagsArgs struct {
	SessionID       string   `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Tags            []string `json:"tags" jsonschema:"the tags that are active from now on (empty clears them); operations with when_tags apply only while all of theirs are active"`
	ExpectedVersion *uint64  `json:"expected_version,omitempty" jsonschema:"refuse the change if the session's version is not this one"`
}

// SetActiveTagsResult is set_active_tags' result.
type SetActiveTagsResult struct {
	ActiveTags []string `json:"active_tags"`
	Version    uint64   `json:"version"`
}

// SetActiveTags replaces the session's active tags.
func (s *Service) SetActiveTags(ctx context.Context, a SetActiveTagsArgs) (SetActiveTagsResult, error) {
	tags, err := validTags("tags", a.Tags, true)
	if err != nil {
		return SetActiveTagsResult{}, err
	}
	slices.Sort(tags)
	info, err := s.Write(ctx, a.SessionID, a.ExpectedVersion, func(_ store.Tx, th *Thread, next *model.Session) (*Change, error) {
		next.ActiveTags = tags
		what := "active tags cleared"
		if len(tags) > 0 {
			what = "active tags set to " + strings.Join(tags, ",")
		}
		return &Change{What: what, Apply: func(th *Thread) { th.view = nil }, Event: Event{Kind: EventTagsSet}}, nil
	})
	if err != nil {
		return SetActiveTagsResult{}, err
	}
	return SetActiveTagsResult{ActiveTags: info.ActiveTags, Version: info.Version}, nil
}
