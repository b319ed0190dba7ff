// Package summary writes summaries of a range of a thread: with the
// calling client's model (sampling), with an OpenAI-compatible endpoint
// the operator configured, or locally from the range's own sentences
// (extractive). It is configured by value; it reads no environment.
package summary

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"weft/formats"
	"weft/internal/english"
)

// The sources a summary can come from, as results name them.
const (
	SourceSampling   = "sampling"   // the calling client's model, through MCP sampling
	SourceEndpoint   = "endpoint"   // the operator's OpenAI-compatible endpoint
	SourceExtractive = "extractive" // weft itself, from the range's own sentences
)

// MaxPromptBytes bounds the transcript of one prompt: a longer range
// keeps its start and its end.
const MaxPromptBytes = 200_000

// messageRunes bounds one message in a prompt (its start and its end).
const messageRunes = 2000

// Instructions asks a model for a summary of the range about describes,
// of at most maxTokens tokens.
func Instructions(about string, maxTokens int) string {
	return fmt.Sprintf("Summarize this part of a conversation (%s) so that the summary can stand in for it in the thread. "+
		"Keep decisions and their reasons, file names, tool names, commands, numbers and open questions; leave out pleasantries and repetition. "+
		"Write plain text of at most %d tokens, with no preamble.", about, maxTokens)
}

// Transcript is the range as a model reads it: one block per
// message with its index, role and time. Long messages keep their start
// and end; a range too long for one prompt keeps its first and last
// messages and says how many it left out. It returns the text and how
// many messages were shortened or left out.
func Transcript(items []formats.Item, indices []int) (string, int) {
	blocks := make([]string, len(items))
	cut := 0
	for k, it := range items {
		content := it.Content
		if n := utf8.RuneCountInString(content); n > messageRunes {
			r := []rune(content)
			head, tail := messageRunes*3/4, messageRunes/5
			content = string(r[:head]) + fmt.Sprintf(" […%d characters…] ", n-head-tail) + string(r[n-tail:])
			cut++
		}
		role := string(it.Role)
		if it.Summary {
			role = "summary"
		}
		when := ""
		if !it.CreatedAt.IsZero() && !it.Synthetic {
			when = " " + it.CreatedAt.UTC().Format("2006-01-02 15:04")
		}
		blocks[k] = fmt.Sprintf("[%d] %s%s:\n%s", indices[k], role, when, content)
	}
	total := 0
	for _, b := range blocks {
		total += len(b) + 2
	}
	if total <= MaxPromptBytes {
		return strings.Join(blocks, "\n\n"), cut
	}
	// Keep the start and the end, half the room each.
	var head, tail []string
	room := MaxPromptBytes / 2
	i := 0
	for ; i < len(blocks) && room-len(blocks[i]) > 0; i++ {
		head = append(head, blocks[i])
		room -= len(blocks[i]) + 2
	}
	room = MaxPromptBytes / 2
	j := len(blocks) - 1
	for ; j > i && room-len(blocks[j]) > 0; j-- {
		tail = append(tail, blocks[j])
		room -= len(blocks[j]) + 2
	}
	slices.Reverse(tail)
	left := j - i + 1
	out := append(head, fmt.Sprintf("[… %s left out of this prompt …]", english.Count(left, "message")))
	return strings.Join(append(out, tail...), "\n\n"), cut + left
}
