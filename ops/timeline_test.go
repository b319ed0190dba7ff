package ops_test

import (
	"testing"
	"time"

	"weft/model"
	"weft/ops/opstest"
)

// TestTimelineKeepsAFarMessageAside: one message dated far from the
// rest (a clock gone wrong, an import of an old note) does not squash
// the timeline into a column: the timeline spans the rest, and says how
// many fall before and after it.
func TestTimelineKeepsAFarMessageAside(t *testing.T) {
	f := opstest.New(t)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var msgs []model.NewMessage
	for i := range 300 {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: "m", CreatedAt: day.Add(time.Duration(i) * 2 * time.Minute)})
	}
	msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: "far", CreatedAt: day.AddDate(1, 0, 0)})
	sid := f.Messages("far", msgs)
	tl, err := f.Svc.Timeline(sid, 240)
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	in := 0
	for _, c := range tl.Counts {
		if c > 0 {
			used++
		}
		in += c
	}
	if tl.End.After(day.Add(24*time.Hour)) || tl.After != 1 || tl.Before != 0 || in != 300 {
		t.Errorf("timeline %s–%s, %d before, %d after, %d in it", tl.Start, tl.End, tl.Before, tl.After, in)
	}
	if used < 200 {
		t.Errorf("the 300 messages fill %d of 240 spans: squashed", used)
	}

	// A thread spread evenly keeps its whole span.
	even := f.Messages("even", msgs[:300])
	tl, err = f.Svc.Timeline(even, 240)
	if err != nil {
		t.Fatal(err)
	}
	if !tl.Start.Equal(day) || !tl.End.Equal(msgs[299].CreatedAt) || tl.Before+tl.After != 0 {
		t.Errorf("even thread: %s–%s, %d before, %d after", tl.Start, tl.End, tl.Before, tl.After)
	}
}

// TestTimelineOfAFewMessagesSpansThemAll: two messages a year apart are
// a timeline of two, not of one with the other set aside.
func TestTimelineOfAFewMessagesSpansThemAll(t *testing.T) {
	f := opstest.New(t)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	sid := f.Messages("two", []model.NewMessage{
		{Role: model.RoleUser, Content: "then", CreatedAt: day},
		{Role: model.RoleUser, Content: "now", CreatedAt: day.AddDate(1, 0, 0)},
	})
	tl, err := f.Svc.Timeline(sid, 240)
	if err != nil {
		t.Fatal(err)
	}
	if !tl.Start.Equal(day) || !tl.End.Equal(day.AddDate(1, 0, 0)) || tl.Before+tl.After != 0 {
		t.Errorf("timeline %s–%s, %d before, %d after", tl.Start, tl.End, tl.Before, tl.After)
	}
}
