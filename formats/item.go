package formats

import (
	"time"

	"weft/model"
)

// Item is one message of a thread being exported (see package export):
// an item of the effective thread, or a stored message for a raw export.
type Item struct {
	ID        model.ItemID
	Role      model.Role
	Content   string
	Name      string
	Parts     []model.Part
	CreatedAt time.Time
	Tokens    int
	Tags      []string
	// Meta is a stored message's meta (what its source said of it:
	// model, cwd, ...), shared with the message: read only.
	Meta      map[string]string
	Synthetic bool
	// OpID and OpType name the operation that made a synthetic item.
	OpID   string
	OpType model.OpType
	// Summary marks a summary (a digest's item, or the revision of
	// exactly one).
	Summary bool
	// MessageCount and TimeSpanStart..TimeSpanEnd say what a synthetic
	// item stands for: how many stored messages (on the first item of
	// its operation) and their time span.
	MessageCount  int
	TimeSpanStart time.Time
	TimeSpanEnd   time.Time
}

// SpanText writes a time span compactly: one date when it is within
// a day: how a summary says when the messages it stands for were
// written.
func SpanText(first, last time.Time) string {
	first, last = first.UTC(), last.UTC()
	const day, clock = "2006-01-02", "15:04"
	switch {
	case first.Equal(last):
		return first.Format(day+" "+clock) + " UTC"
	case first.Format(day) == last.Format(day):
		return first.Format(day+" "+clock) + "–" + last.Format(clock) + " UTC"
	}
	return first.Format(day+" "+clock) + " – " + last.Format(day+" "+clock) + " UTC"
}
