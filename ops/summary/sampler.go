package summary

import "context"

// Sampler asks a model for a completion on behalf of a tool: an MCP face
// supplies one when its client supports sampling. It returns the text and
// the name of the model that wrote it.
type Sampler func(ctx context.Context, prompt string, maxTokens int) (text, model string, err error)

type samplerKey struct{}

// WithSampler returns a context whose tools may ask the caller's model.
func WithSampler(ctx context.Context, s Sampler) context.Context {
	return context.WithValue(ctx, samplerKey{}, s)
}

// SamplerFrom returns the context's sampler, or nil when the caller cannot
// sample.
func SamplerFrom(ctx context.Context) Sampler {
	s, _ := ctx.Value(samplerKey{}).(Sampler)
	return s
}
