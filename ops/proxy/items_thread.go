package proxy

import (
	"weft/formats"
	"weft/model"
	"weft/ops"
)

// effectiveItems are the items of the thread sent: v's, and the
// request's messages past the stored ones.
func (e *Engine) effectiveItems(v *model.View, stored int, msgs []ops.CallerMessage) ([]formats.Item, error) {
	if items, ok := proxyItems(v, 0, msgs, stored); ok {
		return items, nil
	}
	items, err := e.svc.ThreadItems(v, msgs)
	if err != nil {
		return nil, err
	}
	for k, m := range msgs[stored:] {
		items = append(items, newItem(stored+k, &m))
	}
	return items, nil
}

// proxyItems are the items of the thread sent from v's item from on: v's
// stored items are the request's messages (msgs; they continue the
// session), and msgs past the stored ones follow. It is false when an
// item must be read from the store.
func proxyItems(v *model.View, from int, msgs []ops.CallerMessage, stored int) ([]formats.Item, bool) {
	items := make([]formats.Item, 0, v.Len()-from+len(msgs)-stored)
	for _, it := range v.Items[from:] {
		switch {
		case it.Synth >= 0:
			items = append(items, ops.SynthItem(v, it))
		case it.Seq == 0 || it.Seq > uint64(len(msgs)):
			return nil, false
		default:
			items = append(items, ops.CallerItem(v, it, &msgs[it.Seq-1]))
		}
	}
	for k := range msgs[stored:] {
		items = append(items, newItem(stored+k, &msgs[stored+k]))
	}
	return items, true
}

// newItem is the item of a request's message that is not stored yet,
// the k-th (from 0) of the thread.
func newItem(k int, m *ops.CallerMessage) formats.Item {
	nm := &m.Message
	return formats.Item{ID: model.MessageID(uint64(k + 1)), Role: nm.Role, Content: nm.Content, Name: nm.Name, Parts: m.Parts, Tokens: nm.Tokens}
}
