package ops

import (
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// CountTokens counts tokens with the o200k_base encoding (embedded, so it
// works offline). Counts are an estimate for providers with other
// tokenizers, but a consistent one across every view.
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	c := codec()
	if c == nil {
		return approxTokens(s)
	}
	n, err := c.Count(s)
	if err != nil {
		return approxTokens(s)
	}
	return n
}

var codec = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil
	}
	return c
})

// approxTokens is the usual four-characters-a-token estimate, used only if
// the tokenizer cannot load or reject its input.
func approxTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}
