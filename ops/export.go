package ops

import (
	"slices"

	"weft/internal/english"

	"weft/formats"
	"weft/formats/weftjsonl"
	"weft/model"
	"weft/store"
)

// ExportItems returns a session's effective thread (or, with raw, its
// stored messages) as exporters take it.
func (s *Service) ExportItems(ref string, raw bool) (model.Session, []formats.Item, error) {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return model.Session{}, nil, err
	}
	v := snap.View
	var items []formats.Item
	err = s.st.View(func(tx store.Tx) error {
		if raw {
			items = make([]formats.Item, 0, snap.Info.MessageCount)
			return tx.Messages(snap.Info.ID, 1, uint64(snap.Info.MessageCount), func(m model.Message) error {
				it := StoredItem(&m)
				if i := v.IndexOfSeq(m.Seq); i >= 0 {
					it.Tags = v.Tags(v.Items[i])
				}
				items = append(items, it)
				return nil
			})
		}
		items, err = viewItems(tx, v, everyIndex(v))
		return err
	})
	return snap.Info, items, err
}

// viewItems reads view items as exporters take them. Stored bodies are
// read in one pass over their seqs when they lie close together, else
// one by one.
func viewItems(tx store.Tx, v *model.View, indices []int) ([]formats.Item, error) {
	items := make([]formats.Item, len(indices))
	lo, hi, stored := uint64(0), uint64(0), 0
	for k, i := range indices {
		it := v.Items[i]
		if it.Seq > 0 {
			if lo == 0 || it.Seq < lo {
				lo = it.Seq
			}
			hi = max(hi, it.Seq)
			stored++
			continue
		}
		items[k] = SynthItem(v, it)
	}
	if stored == 0 {
		return items, nil
	}
	put := func(k int, m *model.Message) {
		items[k] = StoredItem(m)
		items[k].Tags = v.Tags(v.Items[indices[k]])
	}
	if hi-lo+1 > 4*uint64(stored) { // scattered: read them one by one
		for k, i := range indices {
			if seq := v.Items[i].Seq; seq > 0 {
				m, err := tx.Message(v.SessionID, seq)
				if err != nil {
					return nil, err
				}
				put(k, &m)
			}
		}
		return items, nil
	}
	// Close together: one pass over lo..hi, each put in its place.
	at := make([]int32, hi-lo+1)
	for k, i := range indices {
		if seq := v.Items[i].Seq; seq > 0 {
			at[seq-lo] = int32(k) + 1
		}
	}
	err := tx.Messages(v.SessionID, lo, hi, func(m model.Message) error {
		if k := at[m.Seq-lo]; k > 0 {
			put(int(k-1), &m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// SynthItem is a synthetic item of a view as exporters take it.
func SynthItem(v *model.View, it model.Item) formats.Item {
	sy := &v.Synth[it.Synth]
	return formats.Item{
		ID: sy.ID(), Role: sy.Role, Content: sy.Content, Name: sy.Name, Parts: model.DecodeParts(sy.Parts), CreatedAt: sy.CreatedAt,
		Tokens: sy.Tokens, Tags: v.Tags(it), Synthetic: true, OpID: sy.OpID, OpType: sy.OpType, Summary: sy.Summary,
		MessageCount: sy.MessageCount, TimeSpanStart: sy.TimeSpanStart, TimeSpanEnd: sy.TimeSpanEnd,
	}
}

// TextItems are viewItems with image data dropped (a context or a
// transcript is text; the exporters write a placeholder instead), and
// how many images that was.
func TextItems(tx store.Tx, v *model.View, indices []int) ([]formats.Item, int, error) {
	items, err := viewItems(tx, v, indices)
	if err != nil {
		return nil, 0, err
	}
	return items, dropImages(items), nil
}

// dropImages drops the image data of items' parts, and says how many
// images that was. An item's parts may be shared (threadItems): those
// of an item with images are copied first.
func dropImages(items []formats.Item) int {
	images := 0
	for k := range items {
		copied := false
		for p := range items[k].Parts {
			if part := &items[k].Parts[p]; part.Type == model.PartImage && len(part.Raw) > 0 {
				if !copied {
					items[k].Parts, copied = slices.Clone(items[k].Parts), true
					part = &items[k].Parts[p]
				}
				part.Raw = nil
				images++
			}
		}
	}
	return images
}

// StoredItem is a stored message as exporters take it.
func StoredItem(m *model.Message) formats.Item {
	return formats.Item{
		ID: m.ID, Role: m.Role, Content: m.Content, Name: m.Name, Parts: model.DecodeParts(m.Parts),
		CreatedAt: m.CreatedAt, Tokens: m.Tokens, Meta: m.Meta,
	}
}

// ExportWeft returns everything weft's lossless format holds: the
// session, its stored messages and operations, and what the session is
// known by to the importers (its messages' import keys, the sources
// imported into it), so it keeps its identity when it moves to another
// file.
func (s *Service) ExportWeft(ref string) (weftjsonl.Export, error) {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return weftjsonl.Export{}, err
	}
	e := weftjsonl.Export{Session: snap.Info, Ops: snap.Ops}
	e.Messages = make([]model.Message, 0, snap.Info.MessageCount)
	err = s.st.View(func(tx store.Tx) error {
		if snap.Info.MessageCount > 0 {
			err := tx.Messages(snap.Info.ID, 1, uint64(snap.Info.MessageCount), func(m model.Message) error {
				e.Messages = append(e.Messages, m)
				return nil
			})
			if err != nil {
				return err
			}
		}
		// A message's own key (its ID in this session) is implied by
		// the file; the others go beside it.
		err := tx.EachImportKey(snap.Info.ID, func(key string, seq uint64) error {
			if seq < 1 || seq > uint64(len(e.Messages)) || key == weftjsonl.Key(snap.Info.ID, model.MessageID(seq)) {
				return nil
			}
			if e.Keys == nil {
				e.Keys = make([][]string, len(e.Messages))
			}
			e.Keys[seq-1] = append(e.Keys[seq-1], key)
			return nil
		})
		if err != nil {
			return err
		}
		e.Sources, err = tx.SessionSources(snap.Info.ID)
		return err
	})
	return e, err
}

// ImagesNote is the adjustment that says n images went to the model as
// placeholders.
func ImagesNote(n int) string {
	verb := "are"
	if n == 1 {
		verb = "is"
	}
	return english.Count(n, "image") + " " + verb + " shown as a placeholder ([image TYPE]); weft export keeps them"
}

// everyIndex is every index of view v, in order.
func everyIndex(v *model.View) []int {
	out := make([]int, v.Len())
	for i := range out {
		out[i] = i
	}
	return out
}
