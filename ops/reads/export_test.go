package reads

import (
	"context"

	"weft/ops"
)

// What the package's external tests reach of its insides.

var (
	CountJSON   = countJSON
	SessSnippet = sessSnippet
	// MessageRangeUnfitted is get_message_range without fitTo: one pass.
	MessageRangeUnfitted = getMessageRange
)

const (
	MaxHistory     = maxHistory
	SearchSnippets = searchSnippets
)

// FitPart is the Fit a read's result (a pointer to it) embeds.
func FitPart(res any) *Fit { return res.(fitted).fitPart() }

// FitMessageRange is fitTo for a read of get_message_range's shape.
func FitMessageRange(fn func(*ops.Service, context.Context, MessageRangeArgs) (MessageRangeResult, error)) func(*ops.Service, context.Context, MessageRangeArgs) (MessageRangeResult, error) {
	return fitTo(fn)
}
