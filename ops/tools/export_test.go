package tools

import (
	"context"

	"weft/ops"
)

// What the package's external tests reach of its insides.

// BoundTo is what tool t is bound to: a Service method or a read of
// ops/reads.
func BoundTo(t *Tool) any { return t.fn }

// ReadOnlyTool declares a read-only tool bound to fn, as the registry
// declares its own.
func ReadOnlyTool[A, R any](name, desc string, fn func(*ops.Service, context.Context, A) (R, error)) *Tool {
	return def(name, desc, readOnly, fn)
}
