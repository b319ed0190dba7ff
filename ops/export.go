package ops

import (
	"weft/formats"
	"weft/model"
	"weft/store"
)

// ExportItems returns a session's effective thread (or, with raw, its
// stored messages) as exporters take it.
func (s *Service) ExportItems(ref string, raw bool) (model.Session, []formats.Item, error) {
	snap, err := s.snapshot(ref)
	if err != nil {
		return model.Session{}, nil, err
	}
	v := snap.view
	var items []formats.Item
	err = s.st.View(func(tx *store.Tx) error {
		if raw {
			items = make([]formats.Item, 0, snap.info.MessageCount)
			return tx.Messages(snap.info.ID, 1, uint64(snap.info.MessageCount), func(m model.Message) error {
				it := storedItem(&m)
				if i := v.IndexOfSeq(m.Seq); i >= 0 {
					it.Tags = v.Tags(v.Items[i])
				}
				items = append(items, it)
				return nil
			})
		}
		items = make([]formats.Item, 0, v.Len())
		// Synthetic items first; stored ones are read in one pass in seq
		// order and put in their places.
		for i, it := range v.Items {
			items = append(items, formats.Item{Tags: v.Tags(it)})
			if it.Seq > 0 {
				continue
			}
			sy := &v.Synth[it.Synth]
			items[i] = formats.Item{
				ID: sy.ID(), Role: sy.Role, Content: sy.Content, Name: sy.Name, CreatedAt: sy.CreatedAt,
				Tokens: sy.Tokens, Tags: v.Tags(it), Synthetic: true, OpID: sy.OpID, OpType: sy.OpType,
			}
		}
		if snap.info.MessageCount == 0 {
			return nil
		}
		return tx.Messages(snap.info.ID, 1, uint64(snap.info.MessageCount), func(m model.Message) error {
			if i := v.IndexOfSeq(m.Seq); i >= 0 {
				tags := items[i].Tags
				items[i] = storedItem(&m)
				items[i].Tags = tags
			}
			return nil
		})
	})
	return snap.info, items, err
}

func storedItem(m *model.Message) formats.Item {
	return formats.Item{
		ID: m.ID, Role: m.Role, Content: m.Content, Name: m.Name, Parts: model.DecodeParts(m.Parts),
		CreatedAt: m.CreatedAt, Tokens: m.Tokens,
	}
}

// ExportWeft returns everything weft's lossless format holds: the
// session, its stored messages and its operations.
func (s *Service) ExportWeft(ref string) (model.Session, []model.Message, []model.Op, error) {
	snap, err := s.snapshot(ref)
	if err != nil {
		return model.Session{}, nil, nil, err
	}
	msgs := make([]model.Message, 0, snap.info.MessageCount)
	err = s.st.View(func(tx *store.Tx) error {
		if snap.info.MessageCount == 0 {
			return nil
		}
		return tx.Messages(snap.info.ID, 1, uint64(snap.info.MessageCount), func(m model.Message) error {
			msgs = append(msgs, m)
			return nil
		})
	})
	return snap.info, msgs, snap.ops, err
}
