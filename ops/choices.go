package ops

import "slices"

// String arguments that take one of a fixed set of values. The handlers
// check their arguments against these lists, and the faces describe them
// from the same lists (Tool.ArgChoices: MCP's input schemas list them as
// enums), so what a tool says it takes and what it takes cannot drift.

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

// argChoices names, for each tool, its fixed-value arguments and their
// values.
var argChoices = map[string]map[string][]string{
	"get_session_history":     {"format": historyFormats, "view": views},
	"search_session_history":  {"mode": searchModes, "view": views},
	"get_message_range":       {"view": views},
	"assemble_context":        {"format": assembleFormats},
	"summarize_message_range": {"source": summarySources},
}

// ArgChoices returns the values the tool's argument arg takes when it
// takes one of a fixed set, the default first; nil when it takes any
// value of its type.
func (t *Tool) ArgChoices(arg string) []string {
	return slices.Clone(argChoices[t.Name][arg])
}

// choiceArg checks a fixed-value argument: empty means the first choice,
// anything outside the set is refused with the set.
func choiceArg(arg, v string, choices []string) (string, error) {
	if v == "" {
		return choices[0], nil
	}
	if slices.Contains(choices, v) {
		return v, nil
	}
	return "", Invalidf("%s %q is not %s", arg, v, orList(choices))
}
