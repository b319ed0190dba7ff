package ops

import (
	"runtime"
	"sync"

	"weft/formats"
	"weft/model"
	"weft/store"
)

// preparedBatch is a thread's batch made ready for storing before the
// writer takes it: each message complete but for its seq, and its
// record. The one writer is what bounds an import, so what needs no
// transaction is done here, on every core, while it stores the last
// batch.
type preparedBatch struct {
	msgs []model.Message
	enc  store.Encoded
}

// prepare counts the batch's tokens, digests its messages and encodes
// them, on every core. nil when a message cannot be encoded: the
// writer then meets the error where it always has, with the seq named.
func (im *Import) prepare(batch []formats.Message) *preparedBatch {
	n := len(batch)
	p := &preparedBatch{msgs: make([]model.Message, n)}
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	parts := make([]store.Encoded, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				m := &batch[i]
				if m.Digest == "" {
					m.Digest = model.ContentDigest(m.Role, m.Content)
				}
				if m.Tokens <= 0 {
					m.Tokens = messageTokens(m.Content, m.Parts)
				}
				p.msgs[i] = storedDigested(0, m.NewMessage, im.now, m.Digest)
			}
			parts[w], errs[w] = store.EncodeMessages(p.msgs[lo:hi])
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			return nil
		}
		p.enc = p.enc.Join(parts[w])
	}
	return p
}
