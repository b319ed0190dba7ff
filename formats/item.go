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
	Synthetic bool
	// OpID and OpType name the operation that made a synthetic item.
	OpID   string
	OpType model.OpType
	// Summary marks a summary (a digest's item, or the revision of
	// exactly one).
	Summary bool
}
