package pgstore

import "weft/model"

// Reading ahead. The reads that give a run of a thread (get_message_range,
// get_turns_around, an export) ask for its messages one by one, in
// order: on PostgreSQL each would be a round trip. In a read
// transaction, a reader that asks for the message after the one it had
// gets the next ones read with it, 8 the first time and twice as many
// each time after, up to 64: a run of 40 messages is five round trips,
// not 40, and a reader that reads one message, or jumps about, reads
// as it did. A read transaction sees one snapshot, and stored messages
// never change, so what was read ahead is what a read of its own would
// give; each is handed out once.

// aheadMax bounds how many messages are read ahead at once.
const aheadMax = 64

// ahead is what a read transaction read ahead of its reader.
type ahead struct {
	session string
	last    uint64 // the seq the reader had last
	window  uint64 // how many were read ahead last
	buf     []model.Message
}

// take hands out message seq of session if it was read ahead.
func (a *ahead) take(session string, seq uint64) (model.Message, bool) {
	if session != a.session || len(a.buf) == 0 || seq < a.buf[0].Seq || seq > a.buf[len(a.buf)-1].Seq {
		return model.Message{}, false
	}
	k := seq - a.buf[0].Seq
	m := a.buf[k]
	if m.Seq != seq {
		return model.Message{}, false
	}
	a.buf, a.last = a.buf[k+1:], seq
	return m, true
}

// next is how many messages to read from seq on: more than one when the
// reader is going through session in order.
func (a *ahead) next(session string, seq uint64) uint64 {
	if session != a.session || seq != a.last+1 {
		a.session, a.window, a.buf = session, 0, nil
		return 1
	}
	a.window = min(max(2*a.window, 8), aheadMax)
	return a.window
}

// Message is one stored message (read ahead in a read transaction: see
// ahead).
func (t *Tx) Message(sessionID string, seq uint64) (model.Message, error) {
	if !t.readOnly {
		return t.message(sessionID, seq)
	}
	if m, ok := t.ahead.take(sessionID, seq); ok {
		return m, nil
	}
	n := t.ahead.next(sessionID, seq)
	t.ahead.last = seq
	if n == 1 {
		return t.message(sessionID, seq)
	}
	buf := make([]model.Message, 0, n)
	err := t.Messages(sessionID, seq, seq+n-1, func(m model.Message) error {
		buf = append(buf, m)
		return nil
	})
	if err != nil {
		return model.Message{}, err
	}
	if len(buf) == 0 || buf[0].Seq != seq {
		return t.message(sessionID, seq) // says which is not there
	}
	t.ahead.buf = buf[1:]
	return buf[0], nil
}
