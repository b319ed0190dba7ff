// Package progress carries how far a long call has come from the call
// to the face that tells its client (MCP's progress notifications): a
// Func in the context, and a Meter that reports a counted stage of the
// call at most a few times.
package progress

import (
	"context"
	"sync"
)

// Func receives how far a long call has come: done of total steps
// (total is 0 when it is not known yet), with what the call is doing in
// words. A face passes one in the context (WithProgress) to tell its
// client, as MCP's progress notifications do; calls that do not take long
// never report.
//
// Reports come one at a time, and done goes up with each.
type Func func(done, total int, message string)

type progressKey struct{}

// With returns a context whose long calls report to p: an append
// of many messages, a summary of a long range, an import.
func With(ctx context.Context, p Func) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// From returns the context's Func, or nil.
func From(ctx context.Context) Func {
	p, _ := ctx.Value(progressKey{}).(Func)
	return p
}

// Steps bounds how many reports one stage of a call makes: a client
// wants to see movement, not one notification per message.
const Steps = 20

// progressMin is the least work worth reporting: a call over fewer items
// is quick, and its reports would cost more than they tell.
const progressMin = 1000

// Meter reports a counted stage of a call to the context's Progress, at
// most Steps times, safely from several goroutines. A nil meter
// (no Func, or too little work) reports nothing.
type Meter struct {
	mu       sync.Mutex
	report   Func
	total    int
	done     int
	next     int // the count at which the next report is due
	step     int
	message  string
	reported int
}

// New returns a Meter over total items, or nil when the context has
// no Func or total is too small to be worth reporting.
func New(ctx context.Context, total int, message string) *Meter {
	p := From(ctx)
	if p == nil || total < progressMin {
		return nil
	}
	step := max(total/Steps, 1)
	return &Meter{report: p, total: total, step: step, next: step, message: message}
}

// Add counts n more items done, reporting when a step is passed.
func (m *Meter) Add(n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	if m.done < m.next && m.done < m.total {
		return
	}
	for m.next <= m.done {
		m.next += m.step
	}
	if done := min(m.done, m.total); done > m.reported {
		m.reported = done
		m.report(done, m.total, m.message)
	}
}

// Stage names what the items counted from now on are for: the next
// report says it.
func (m *Meter) Stage(message string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.message = message
	m.mu.Unlock()
}
