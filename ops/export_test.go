package ops

import "weft/ops/summary"

// What the package's external tests reach of its insides.

const (
	MaxAppend        = maxAppend
	SumDefaultTokens = sumDefaultTokens
)

// SetSummaryEndpoint points the running service s at a summary endpoint,
// as WithSummaryEndpoint does when it is made.
func SetSummaryEndpoint(s *Service, e summary.Endpoint) { s.endpoint = e }

// PlaceKeys are the keys of the raw messages a thread was read from.
func PlaceKeys(p Places) []PlaceKey { return p.keys }
