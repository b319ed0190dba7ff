package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"weft/ops/reads"
	"weft/ops/tools"
)

// TestToolHeavyReadsFitTheirBudget is the bar: every read tool
// the registry marks read-only, and every resource, read with its
// defaults on the tool-heavy thread, over MCP and over POST /api, gives
// a result within the default budget, counted on what a model is fed;
// the result says honestly what it counts; the structured content is the
// text's JSON, so a client feeding either gives the model one copy; and
// no tool output appears twice.
func TestToolHeavyReadsFitTheirBudget(t *testing.T) {
	t.Parallel()
	sizes := measureHeavy(t)
	logSizes(t, sizes)
	measured := map[string]bool{}
	for _, m := range sizes {
		name := m.read.name
		measured[m.read.tool] = true
		if m.tokens > reads.DefaultMaxTokens {
			t.Errorf("%s: %d tokens over MCP (%d bytes), over the default budget of %d", name, m.tokens, len(m.text), reads.DefaultMaxTokens)
		}
		if m.httpTokens > reads.DefaultMaxTokens {
			t.Errorf("%s: %d tokens over HTTP, over the default budget of %d", name, m.httpTokens, reads.DefaultMaxTokens)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(m.text), &res); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Every result says what it counts, exactly, and the budget it
		// was fitted to.
		if claimed, ok := res["result_tokens"].(float64); !ok || int(claimed) != m.tokens {
			t.Errorf("%s: result_tokens %v, but it counts %d", name, res["result_tokens"], m.tokens)
		}
		if budget, ok := res["max_tokens"].(float64); !ok || int(budget) != reads.DefaultMaxTokens {
			t.Errorf("%s: max_tokens %v, want the default %d", name, res["max_tokens"], reads.DefaultMaxTokens)
		}
		if m.read.tool != "" {
			if m.structured == "" {
				t.Errorf("%s: no structured content", name)
			} else if !sameJSON(m.structured, m.text) {
				t.Errorf("%s: the structured content is not the text's JSON", name)
			}
		}
		// Each round's tool output starts with its own first line: it
		// appears at most once in any result.
		for k := range 100 {
			if n := strings.Count(m.text, fmt.Sprintf("func handler%d_0(", k)); n > 1 {
				t.Errorf("%s: the output of round %d appears %d times", name, k, n)
				break
			}
		}
	}
	for _, tool := range tools.All() {
		if tool.ReadOnly && !measured[tool.Name] {
			t.Errorf("read-only tool %s is not in the measure", tool.Name)
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// itemIDs are the items a read's result gives, by ID (an index for a
// transcript, which shows no IDs), in the lists every read uses.
func itemIDs(t *testing.T, res map[string]any) []string {
	t.Helper()
	var ids []string
	if inner, ok := res["context"].(map[string]any); ok {
		return itemIDs(t, inner)
	}
	for _, key := range []string{"summaries", "raw_turns", "messages", "unsummarized", "matches", "operations", "sessions"} {
		list, _ := res[key].([]any)
		for _, x := range list {
			el := x.(map[string]any)
			id, _ := el["id"].(string)
			if id == "" {
				id, _ = el["operation_id"].(string)
			}
			if id == "" {
				id, _ = el["session_id"].(string)
			}
			if s, ok := el["session"].(map[string]any); ok && id == "" {
				id, _ = s["session_id"].(string)
			}
			if id == "" {
				t.Fatalf("%s: an item without an ID: %v", key, el)
			}
			if sum, ok := el["message_count"]; ok && key == "summaries" {
				id += fmt.Sprint("/summary of ", sum)
			}
			ids = append(ids, id)
		}
	}
	if text, ok := res["text"].(string); ok {
		for _, m := range transcriptLine.FindAllStringSubmatch(text, -1) {
			ids = append(ids, "index "+m[1])
		}
	}
	return ids
}

// transcriptLine is an item's first line in get_session_history's text:
// its index, time and role.
var transcriptLine = regexp.MustCompile(`(?m)^\[(\d+)\] \d{4}-\d\d-\d\d \d\d:\d\d (?:user|assistant|tool|system)`)

// sortedIDs is ids sorted, for comparing sets that pages give in their
// own order.
func sortedIDs(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// duplicates lists the IDs given more than once.
func duplicates(ids []string) []string {
	seen := map[string]int{}
	var out []string
	for _, id := range ids {
		if seen[id]++; seen[id] == 2 {
			out = append(out, id)
		}
	}
	return out
}
