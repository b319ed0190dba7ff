package ops

import (
	"context"

	"weft/model"
)

// ListOperationsArgs are list_operations' arguments.
type ListOperationsArgs struct {
	SessionID  string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	ActiveOnly bool   `json:"active_only,omitempty" jsonschema:"only the operations now in effect (active or partial)"`
}

// OperationOut describes an operation in results.
type OperationOut struct {
	OperationID string             `json:"operation_id"`
	OpType      model.OpType       `json:"op_type"`
	Status      model.OpStatus     `json:"status"`
	Active      bool               `json:"active"`
	Targets     []model.ItemID     `json:"targets"`
	Anchor      model.ItemID       `json:"anchor,omitempty"`
	Tags        []string           `json:"tags,omitempty"`
	WhenTags    []string           `json:"when_tags,omitempty"`
	Summary     string             `json:"summary,omitempty"`
	Messages    []model.NewMessage `json:"messages,omitempty"`
	// Index is where the operation shows in the effective thread: its
	// marker, or its first tagged item. Absent when it shows nowhere.
	Index      *int   `json:"index,omitempty"`
	CreatedAt  string `json:"created_at"`
	RevertedAt string `json:"reverted_at,omitempty"`
	Author     string `json:"author"`
	Version    uint64 `json:"version"`
}

// ListOperationsResult is list_operations' result.
type ListOperationsResult struct {
	SessionID  string         `json:"session_id"`
	Version    uint64         `json:"version"`
	Operations []OperationOut `json:"operations"`
}

// ListOperations lists a session's operations in creation order.
func (s *Service) ListOperations(_ context.Context, a ListOperationsArgs) (ListOperationsResult, error) {
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return ListOperationsResult{}, err
	}
	v := snap.view
	at := markerIndex(v)
	res := ListOperationsResult{SessionID: snap.info.ID, Version: snap.info.Version, Operations: []OperationOut{}}
	for _, op := range snap.ops {
		st := v.Status[op.ID]
		if a.ActiveOnly && st != model.StatusActive && st != model.StatusPartial {
			continue
		}
		out := OperationOut{
			OperationID: op.ID, OpType: op.Type, Status: st, Active: op.Active,
			Targets: op.Targets, Anchor: op.Anchor, Tags: op.Payload.Tags, WhenTags: op.WhenTags,
			Summary: op.Payload.Summary, Messages: op.Payload.Messages,
			CreatedAt: formatTime(op.CreatedAt), Author: op.Author, Version: op.Version,
		}
		if out.Targets == nil {
			out.Targets = []model.ItemID{}
		}
		if op.RevertedAt != nil {
			out.RevertedAt = formatTime(*op.RevertedAt)
		}
		if i, ok := at[op.ID]; ok {
			out.Index = &i
		} else if op.Type == model.OpTag && (st == model.StatusActive || st == model.StatusPartial) {
			first := -1
			for _, id := range op.Targets {
				if j := v.IndexOf(id); j >= 0 && (first < 0 || j < first) {
					first = j
				}
			}
			if first >= 0 {
				out.Index = &first
			}
		}
		res.Operations = append(res.Operations, out)
	}
	return res, nil
}

// markerIndex maps each operation that left a marker to where the marker
// shows; a nested marker shows where its outermost marker does.
func markerIndex(v *model.View) map[string]int {
	at := make(map[string]int, len(v.Markers))
	var walk func(ms []model.Marker, idx int)
	walk = func(ms []model.Marker, idx int) {
		for _, m := range ms {
			at[m.OpID] = idx
			walk(m.Nested, idx)
		}
	}
	for _, m := range v.Markers {
		at[m.OpID] = m.At
		walk(m.Nested, m.At)
	}
	return at
}
