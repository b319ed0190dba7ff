package ops

import (
	"weft/model"
	"weft/store"
)

// Schema is the version of the layout the store is written in, for
// faces that report it (the health check).
func (s *Service) Schema() uint32 { return s.st.Schema() }

// Messages reads stored messages of a session by seq, in the order asked,
// in one read transaction. A seq the session does not have is an error
// that names it.
func (s *Service) Messages(ref string, seqs []uint64) ([]model.Message, error) {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return nil, err
	}
	out := make([]model.Message, 0, len(seqs))
	err = s.st.View(func(tx store.Tx) error {
		for _, seq := range seqs {
			if seq == 0 || seq > uint64(snap.Info.MessageCount) {
				return NotFoundf("session %s has no stored message %d (it has %d)", snap.Info.ID, seq, snap.Info.MessageCount)
			}
			msg, err := tx.Message(snap.Info.ID, seq)
			if err != nil {
				return err
			}
			out = append(out, msg)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
