package migrate

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"time"

	"weft/model"
)

// Records are compared by what they say, not how a backend spells it: a
// time in another zone is the same instant, and JSON a backend keeps as
// a document (PostgreSQL's jsonb) may come back with its keys in another
// order.

// sameSession reports whether two session records say the same.
func sameSession(a, b model.Session) bool {
	return sameJSON(normSession(a), normSession(b))
}

// sameOp reports whether two operations say the same.
func sameOp(a, b model.Op) bool {
	return sameJSON(normOp(a), normOp(b))
}

func normSession(s model.Session) model.Session {
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	if s.Changes != nil {
		s.Changes = slices.Clone(s.Changes)
		for i := range s.Changes {
			s.Changes[i].At = s.Changes[i].At.UTC()
		}
	}
	return s
}

func normOp(o model.Op) model.Op {
	o.CreatedAt = o.CreatedAt.UTC()
	if o.RevertedAt != nil {
		at := o.RevertedAt.UTC()
		o.RevertedAt = &at
	}
	if o.Payload.Messages != nil {
		o.Payload.Messages = slices.Clone(o.Payload.Messages)
		for i := range o.Payload.Messages {
			o.Payload.Messages[i].CreatedAt = o.Payload.Messages[i].CreatedAt.UTC()
		}
	}
	return o
}

// sameJSON reports whether a and b encode to the same JSON value.
func sameJSON(a, b any) bool {
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false
	}
	return sameJSONBytes(ja, jb)
}

// sameJSONBytes reports whether a and b are the same bytes, or JSON of
// the same value.
func sameJSONBytes(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, oka := decodeJSON(a)
	vb, okb := decodeJSON(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

func decodeJSON(b []byte) (any, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// messageDiff names the first field in which two stored messages
// differ, "" when they do not.
func messageDiff(a, b model.Message) string {
	switch {
	case a.Seq != b.Seq || a.ID != b.ID:
		return "seq"
	case a.Role != b.Role:
		return "role"
	case a.Content != b.Content:
		return "content"
	case a.Name != b.Name:
		return "name"
	case !sameParts(a.Parts, b.Parts):
		return "parts"
	case !a.CreatedAt.Equal(b.CreatedAt):
		return "created_at " + a.CreatedAt.UTC().Format(time.RFC3339Nano) + " / " + b.CreatedAt.UTC().Format(time.RFC3339Nano)
	case a.Tokens != b.Tokens:
		return "tokens"
	case !maps.Equal(a.Meta, b.Meta):
		return "meta"
	case a.Digest != b.Digest:
		return "digest"
	}
	return ""
}

func sameParts(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return sameJSONBytes(a, b)
}
