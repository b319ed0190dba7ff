package ops

import (
	"slices"
	"strings"
)

// String arguments that take one of a fixed set of values. The handlers
// check their arguments against these lists, and the tool registry
// (ops/tools: Tool.ArgChoices) describes them from the same lists (MCP's
// input schemas list them as enums), so what a tool says it takes and
// what it takes cannot drift.

// The views a read can take.
const (
	ViewEffective = "effective" // the stored messages with the active operations applied
	ViewRaw       = "raw"       // the stored messages
)

// The modes of search_session_history.
const (
	SearchSubstring = "substring" // case-insensitive, in thread order
	SearchFuzzy     = "fuzzy"     // characters in order, best first
)

// SourceAuto picks a summary source: the client's model, else the
// configured endpoint, else extractive.
const SourceAuto = "auto"

// Each list's first value is the default an empty argument means.
var (
	views           = []string{ViewEffective, ViewRaw}
	searchModes     = []string{SearchSubstring, SearchFuzzy}
	historyFormats  = []string{"text", "markdown", "json"}
	assembleFormats = []string{"openai", "anthropic", "text"}
	summarySources  = []string{SourceAuto, SourceSampling, SourceEndpoint, SourceExtractive}
)

// Views are the views a read takes (view), the default first.
func Views() []string { return slices.Clone(views) }

// SearchModes are search_session_history's modes (mode), the default
// first.
func SearchModes() []string { return slices.Clone(searchModes) }

// HistoryFormats are get_session_history's formats (format), the
// default first.
func HistoryFormats() []string { return slices.Clone(historyFormats) }

// AssembleFormats are assemble_context's formats (format), the default
// first.
func AssembleFormats() []string { return slices.Clone(assembleFormats) }

// SummarySources are summarize_message_range's sources (source), the
// default first.
func SummarySources() []string { return slices.Clone(summarySources) }

// ChoiceArg checks a fixed-value argument: empty means the first choice,
// anything outside the set is refused with the set.
func ChoiceArg(arg, v string, choices []string) (string, error) {
	if v == "" {
		return choices[0], nil
	}
	if slices.Contains(choices, v) {
		return v, nil
	}
	return "", Invalidf("%s %q is not %s", arg, v, OrList(choices))
}

// OrList lists choices as "a, b or c".
func OrList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
