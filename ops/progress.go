package ops

import (
	"context"
	"sync"
)

// Progress receives how far a long call has come: done of total steps
// (total is 0 when it is not known yet), with what the call is doing in
// words. A face passes one in the context (WithProgress) to tell its
// client, as MCP's progress notifications do; calls that do not take long
// never report.
//
// Reports come one at a time, and done goes up with each.
type Progress func(done, total int, message string)

type progressKey struct{}

// WithProgress returns a context whose long calls report to p: an append
// of many messages, a summary of a long range, an import.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the context's Progress, or nil.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// progressSteps bounds how many reports one stage of a call makes: a
// client wants to see movement, not one notification per message.
const progressSteps = 20

// progressMin is the least work worth reporting: a call over fewer items
// is quick, and its reports would cost more than they tell.
const progressMin = 1000

// meter reports a counted stage of a call to the context's Progress, at
// most progressSteps times, safely from several goroutines. A nil meter
// (no Progress, or too little work) reports nothing.
type meter struct {
	mu       sync.Mutex
	report   Progress
	total    int
	done     int
	next     int // the count at which the next report is due
	step     int
	message  string
	reported int
}

// newMeter returns a meter over total items, or nil when the context has
// no Progress or total is too small to be worth reporting.
func newMeter(ctx context.Context, total int, message string) *meter {
	p := ProgressFrom(ctx)
	if p == nil || total < progressMin {
		return nil
	}
	step := max(total/progressSteps, 1)
	return &meter{report: p, total: total, step: step, next: step, message: message}
}

// add counts n more items done, reporting when a step is passed.
func (m *meter) add(n int) {
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

// stage names what the items counted from now on are for: the next
// report says it.
func (m *meter) stage(message string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.message = message
	m.mu.Unlock()
}
