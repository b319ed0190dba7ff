package ops_test

import (
	"context"
	"fmt"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/progress"
	"weft/ops/tools/toolstest"
)

// progressLog collects a call's reports and checks what every client of
// them relies on: done goes up with each, never past a known total.
type progressLog struct {
	t       *testing.T
	reports []string
	done    []int
	total   int
}

func (l *progressLog) progress(done, total int, message string) {
	if n := len(l.done); n > 0 && done <= l.done[n-1] {
		l.t.Errorf("progress went from %d to %d (%q)", l.done[n-1], done, message)
	}
	if total > 0 && done > total {
		l.t.Errorf("progress %d of %d", done, total)
	}
	l.done, l.total = append(l.done, done), total
	l.reports = append(l.reports, fmt.Sprintf("%d/%d %s", done, total, message))
}

// finished reports whether the last report says the whole call is done.
func (l *progressLog) finished() bool {
	return len(l.done) > 0 && l.done[len(l.done)-1] == l.total
}

func TestLongCallsReportProgress(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("long", 1)
	msgs := make([]model.NewMessage, ops.MaxAppend)
	for i := range msgs {
		msgs[i] = model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("message %d of a long append", i)}
	}

	t.Run("append", func(t *testing.T) {
		log := &progressLog{t: t}
		ctx := progress.With(context.Background(), log.progress)
		if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		if len(log.reports) < 5 || len(log.reports) > progress.Steps+2 || !log.finished() {
			t.Fatalf("a %d-message append reported %d times, want a few and the end:\n%v", len(msgs), len(log.reports), log.reports)
		}
	})

	t.Run("summary", func(t *testing.T) {
		log := &progressLog{t: t}
		ctx := progress.With(context.Background(), log.progress)
		start, end := 0, ops.MaxAppend
		res, err := f.Svc.SummarizeMessageRange(ctx, ops.SummarizeArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Source: ops.SourceExtractive})
		if err != nil {
			t.Fatal(err)
		}
		if res.MessageCount != ops.MaxAppend+1 || len(log.reports) < 2 || !log.finished() {
			t.Fatalf("a summary of %d messages reported %v", res.MessageCount, log.reports)
		}
	})

	t.Run("short calls say nothing", func(t *testing.T) {
		log := &progressLog{t: t}
		ctx := progress.With(context.Background(), log.progress)
		if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: msgs[:3]}); err != nil {
			t.Fatal(err)
		}
		if len(log.reports) != 0 {
			t.Fatalf("a 3-message append reported %v", log.reports)
		}
	})
}
