package httpx

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

const (
	// MaxBodyBytes caps a request body where a face sets no cap of its
	// own: a large append is a few MB; anything past this is a mistake
	// or an attack.
	MaxBodyBytes = 8 << 20
	// ReadTimeout is how long a request's headers may take to arrive, and
	// how long its body may take beyond what its size explains at
	// minBodyRate: a client that opens a request and then trickles it
	// (thousands of them would use up the process's files) is cut off.
	ReadTimeout = 10 * time.Second
	// minBodyRate is the slowest a body may keep coming, in bytes per
	// second, once ReadTimeout is spent: far below any real link, far
	// above a trickle.
	minBodyRate = 8 << 10
)

// timedBody bounds the time to read a request body: each read must
// finish by start + grace + (bytes so far) / minBodyRate, so a body that
// keeps coming at a fair rate is read whatever its size, and one that
// stalls is cut after grace. Once the body is read the deadline is
// lifted (the server's own end-of-body read lifts it too), so a long
// answer is never cut. The deadline is set as soon as the request is
// taken, so a body nobody reads (a refused request's) cannot hold the
// connection either: the server reads what is left of it before
// answering, and stops at the deadline.
type timedBody struct {
	body  io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	n     int64
	done  bool
}

// TimedBody is body, read within grace plus the time its size explains
// (see timedBody); a body that stops coming fails with ErrBodyTooSlow.
// The deadline starts now.
func TimedBody(w http.ResponseWriter, body io.ReadCloser, grace time.Duration) io.ReadCloser {
	b := &timedBody{body: body, rc: http.NewResponseController(w), start: time.Now(), grace: grace}
	_ = b.rc.SetReadDeadline(b.start.Add(grace))
	return b
}

func (b *timedBody) Read(p []byte) (int, error) {
	if !b.done {
		_ = b.rc.SetReadDeadline(b.start.Add(b.grace + time.Duration(b.n)*time.Second/minBodyRate))
	}
	n, err := b.body.Read(p)
	b.n += int64(n)
	if err != nil && !b.done {
		b.done = true
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The deadline stays passed, so the server does not wait for
			// the rest of the body before closing the connection.
			return n, ErrBodyTooSlow
		}
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *timedBody) Close() error { return b.body.Close() }

// ErrBodyTooSlow is a body that stopped coming, or came too slowly.
var ErrBodyTooSlow = errors.New("the request body came too slowly: send it at once")

// BodyReadError answers a request whose body could not be read, saying
// why: too large, too slow, or cut off.
func BodyReadError(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		WriteTooLarge(w)
	case errors.Is(err, ErrBodyTooSlow):
		// The connection cannot be used again: the rest of the body may
		// still be on its way.
		w.Header().Set("Connection", "close")
		WriteError(w, http.StatusRequestTimeout, err.Error())
	default:
		WriteError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
	}
}

// WriteTooLarge refuses a body over MaxBodyBytes.
func WriteTooLarge(w http.ResponseWriter) {
	WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d MB: send less at once (append_messages takes batches)", MaxBodyBytes>>20))
}
