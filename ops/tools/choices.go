package tools

import (
	"slices"

	"weft/ops"
	"weft/ops/memory"
)

// argChoices names, for each tool, its fixed-value arguments and their
// values. The handlers check their arguments against the same lists
// (ops.Views and the others), so what a tool says it takes and what it
// takes cannot drift.
var argChoices = map[string]map[string][]string{
	"get_session_history":     {"format": ops.HistoryFormats(), "view": ops.Views()},
	"search_session_history":  {"mode": ops.SearchModes(), "view": ops.Views()},
	"get_message_range":       {"view": ops.Views()},
	"assemble_context":        {"format": ops.AssembleFormats()},
	"summarize_message_range": {"source": ops.SummarySources()},
	"set_memory_policy":       {"scope": memory.Scopes()},
}

// ArgChoices returns the values the tool's argument arg takes when it
// takes one of a fixed set, the default first; nil when it takes any
// value of its type. The faces describe them from here (MCP's input
// schemas list them as enums).
func (t *Tool) ArgChoices(arg string) []string {
	return slices.Clone(argChoices[t.Name][arg])
}
