package ingest

import (
	"runtime"
	"sync"

	"weft/formats"
	"weft/model"
	"weft/ops"
	"weft/store"
)

// preparedBatch is a thread's batch made ready for storing before the
// writer takes it: its messages' tokens and digests are set (on the
// batch) and enc holds their records. The one writer is what bounds an
// import, so what needs no transaction is done here, on every core,
// while it stores the last batch.
type preparedBatch struct {
	enc store.Encoded
}

// prepareChunk is how many messages a worker completes at a time to
// encode them: the complete messages are kept no longer than that, the
// writer making them again from the batch (cheap, the tokens and digest
// known).
const prepareChunk = 256

// prepare counts the batch's tokens, digests its messages and encodes
// them, on every core. nil when a message cannot be encoded: the
// writer then meets the error where it always has, with the seq named.
func (im *Import) prepare(batch []formats.Message) *preparedBatch {
	n := len(batch)
	workers := min(runtime.GOMAXPROCS(0), max(n/prepareChunk, 1))
	parts := make([]store.Encoded, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() {
			msgs := make([]model.Message, 0, prepareChunk)
			for start := lo; start < hi; start += prepareChunk {
				msgs = msgs[:0]
				for i := start; i < min(hi, start+prepareChunk); i++ {
					m := &batch[i]
					if m.Digest == "" {
						m.Digest = model.ContentDigest(m.Role, m.Content)
					}
					if m.Tokens <= 0 {
						m.Tokens = ops.MessageTokens(m.Content, m.Parts)
					}
					msgs = append(msgs, ops.StoredMessage(0, m.NewMessage, im.now, m.Digest))
				}
				enc, err := im.s.Store().Encode(msgs)
				if err != nil {
					errs[w] = err
					return
				}
				parts[w] = join(parts[w], enc)
			}
		})
	}
	wg.Wait()
	p := &preparedBatch{}
	for w := range workers {
		if errs[w] != nil {
			return nil
		}
		p.enc = join(p.enc, parts[w])
	}
	return p
}

// join is a's records then b's; a may be nil.
func join(a, b store.Encoded) store.Encoded {
	if a == nil {
		return b
	}
	return a.Join(b)
}
