// Package readers maps each format to its importer: the root package
// formats cannot, as every importer imports it.
package readers

import (
	"weft/formats"
	"weft/formats/chatgpt"
	"weft/formats/claudecode"
	"weft/formats/codex"
	"weft/formats/openai"
	"weft/formats/sharegpt"
	"weft/formats/weftjsonl"
)

var readers = map[formats.Format]formats.Reader{
	formats.ClaudeCode: claudecode.Read,
	formats.ChatGPT:    chatgpt.Read,
	formats.Codex:      codex.Read,
	formats.OpenAI:     openai.Read,
	formats.ShareGPT:   sharegpt.Read,
	formats.Weft:       weftjsonl.Read,
}

// For returns the importer of a format.
func For(f formats.Format) (formats.Reader, bool) {
	r, ok := readers[f]
	return r, ok
}
