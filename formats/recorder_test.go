package formats

import (
	"testing"

	"weft/model"
)

// recorder is an Emitter that keeps everything it is given, and checks
// the calls come in a valid order.
type recorder struct {
	t       testing.TB
	threads []*recordedThread
	open    bool
}

type recordedThread struct {
	Info     ThreadInfo
	Messages []Message
	Digests  []recordedDigest
	Ops      []model.Op
}

type recordedDigest struct{ From, To, Summary string }

func newRecorder(t testing.TB) *recorder { return &recorder{t: t} }

func (r *recorder) cur() *recordedThread {
	if !r.open {
		r.t.Fatalf("emitter called outside Begin/End")
	}
	return r.threads[len(r.threads)-1]
}

func (r *recorder) Begin(t ThreadInfo) error {
	if r.open {
		r.t.Fatalf("Begin inside an open thread")
	}
	r.open = true
	r.threads = append(r.threads, &recordedThread{Info: t})
	return nil
}

func (r *recorder) Message(m Message) error {
	th := r.cur()
	if m.Key == "" {
		r.t.Fatalf("message without an import key: %+v", m)
	}
	for _, old := range th.Messages {
		if old.Key == m.Key {
			r.t.Fatalf("import key %q used twice in one thread", m.Key)
		}
	}
	if err := m.Validate(); err != nil {
		r.t.Fatalf("invalid message %q: %v", m.Key, err)
	}
	th.Messages = append(th.Messages, m)
	return nil
}

func (r *recorder) Digest(from, to, summary string) error {
	th := r.cur()
	fi, ti := r.index(th, from), r.index(th, to)
	if fi < 0 || ti < 0 || fi > ti {
		r.t.Fatalf("digest %s..%s does not name an emitted range", from, to)
	}
	th.Digests = append(th.Digests, recordedDigest{from, to, summary})
	return nil
}

func (r *recorder) Op(op model.Op) error {
	th := r.cur()
	th.Ops = append(th.Ops, op)
	return nil
}

func (r *recorder) End() error {
	r.cur()
	r.open = false
	return nil
}

func (r *recorder) index(th *recordedThread, key string) int {
	for i, m := range th.Messages {
		if m.Key == key {
			return i
		}
	}
	return -1
}

// roles summarises a thread's roles compactly: "system user assistant tool".
func (th *recordedThread) roles() string {
	s := ""
	for i, m := range th.Messages {
		if i > 0 {
			s += " "
		}
		s += string(m.Role)
	}
	return s
}
