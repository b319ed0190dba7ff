package ops

import (
	"context"
	"slices"

	"weft/model"
	"weft/store"
)

// CreateWith creates session info in one write, holding msgs (another
// session's stored messages 1..n, as a fork copies them) and ops made
// elsewhere (CarryOps).
func (s *Service) CreateWith(ctx context.Context, info model.Session, msgs []model.Message, ops []model.Op, what string) (model.Session, error) {
	return s.Create(ctx, info, func(_ store.Tx, _ *Thread, next *model.Session) (*Change, error) {
		for _, m := range msgs {
			next.Tokens += m.Tokens
		}
		next.MessageCount = len(msgs)
		ch := &Change{What: what, Store: func(tx store.Tx) error { return tx.AppendMessages(next.ID, msgs) }, Reload: true, Event: Event{What: what}}
		ch.CarryOps(next, ops)
		return ch, nil
	})
}

// CarryOps makes ch, a change that creates session next, store ops too
// (made elsewhere: a fork's, carried from its source), each recording
// next's first version, and the cached session show them.
func (ch *Change) CarryOps(next *model.Session, ops []model.Op) {
	if len(ops) == 0 {
		return
	}
	next.OpCount += len(ops)
	stored, applied := ch.Store, ch.Apply
	ch.Store = func(tx store.Tx) error {
		if stored != nil {
			if err := stored(tx); err != nil {
				return err
			}
		}
		for _, op := range ops {
			op.Version = next.Version
			if err := tx.PutOp(next.ID, op); err != nil {
				return err
			}
		}
		return nil
	}
	ch.Apply = func(t *Thread) {
		if applied != nil {
			applied(t)
		}
		t.Ops, t.view = append(slices.Clone(t.Ops), ops...), nil
	}
}
