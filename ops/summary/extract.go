package summary

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"weft/formats"
	"weft/internal/tokens"
	"weft/model"
)

// The extractive summary: a header that says what the range is, the
// tools and files it mentions, then the most informative sentences, in
// thread order, as many as the budget holds. A sentence scores by how
// rare its words are in the range (so the distinctive ones win over
// chatter), with a bonus for words that mark decisions and problems,
// for file and tool names and numbers, and for what the user asked;
// near-repeats are skipped, and no message gives more than two
// sentences. Everything is deterministic.

var (
	// fileRE tells a word that is a file name or a path: a name with
	// a known extension, a path from /, ./, ../ or ~/, or one with two
	// slashes or more (one slash is as often a unit: ns/op, req/s).
	fileRE = regexp.MustCompile(`^(?:(?:[A-Za-z0-9_.~-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:go|mod|sum|py|js|ts|tsx|jsx|rs|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|sh|bash|zsh|sql|md|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|lock|html|css|scss|xml|csv|proto|tf|lua|ex|exs|vue|svelte|env|log|db)|(?:\.{0,2}|~)/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?|[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+){2,}/?)$`)
	wordRE = regexp.MustCompile(`[\p{L}\p{N}_]+`)
	// codeFence matches a fenced code block.
	codeFence = regexp.MustCompile("(?s)```.*?(```|$)")
	// tagRE is markup tags, which are neither files nor prose.
	tagRE = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9_-]*(?:\s[^<>]*)?>`)
)

var cueWords = map[string]bool{
	"decided": true, "decide": true, "decision": true, "chose": true, "choose": true, "agreed": true,
	"because": true, "instead": true, "should": true, "must": true, "need": true, "needs": true,
	"fix": true, "fixed": true, "bug": true, "error": true, "errors": true, "fail": true, "fails": true,
	"failed": true, "failing": true, "broken": true, "todo": true, "plan": true, "next": true,
	"problem": true, "issue": true, "works": true, "done": true, "result": true, "conclusion": true,
	"important": true, "risk": true, "tradeoff": true, "why": true, "cause": true,
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "that": true, "this": true, "with": true, "you": true,
	"are": true, "was": true, "but": true, "not": true, "have": true, "has": true, "had": true,
	"can": true, "will": true, "would": true, "could": true, "from": true, "they": true, "them": true,
	"then": true, "than": true, "there": true, "here": true, "what": true, "when": true, "which": true,
	"into": true, "just": true, "like": true, "also": true, "some": true, "any": true, "all": true,
	"its": true, "it's": true, "our": true, "your": true, "yes": true, "okay": true, "let": true,
	"let's": true, "now": true, "one": true, "out": true, "about": true, "more": true, "been": true,
	"does": true, "did": true, "doing": true, "get": true, "got": true, "see": true, "sure": true,
	"thanks": true, "thank": true, "please": true, "great": true, "good": true, "well": true, "very": true,
	"how": true, "who": true, "where": true, "only": true, "each": true, "other": true, "these": true,
	"those": true, "being": true,
}

// maxPerItem is how many sentences of one message a summary takes at
// most, so one long message does not crowd out the rest.
const maxPerItem = 2

// unit is a sentence of the range, a candidate for the summary.
type unit struct {
	pos   int // order in the range
	item  int // the item it is from
	role  string
	text  string
	words []string // distinct, lower-cased, content words
	score float64
	cost  int
}

// Extract writes a summary of items from their own sentences, in at most
// budget tokens: about (what the range is) first, then the tools and
// files it mentions and its most informative sentences.
func Extract(items []formats.Item, about string, budget int) string {
	var tools, files []string
	toolCount := map[string]int{}
	fileSeen := map[string]bool{}
	addFile := func(f string) {
		key := strings.ToLower(f)
		if len(f) < 3 || len(f) > 120 || fileSeen[key] || !strings.ContainsAny(f, "./") {
			return
		}
		if strings.Count(f, "/") == 1 && strings.HasPrefix(f, "/") && !strings.Contains(f, ".") {
			return // a command (/add) or a unit (/op), not a file
		}
		fileSeen[key] = true
		files = append(files, f)
	}
	var units []unit
	for ii, it := range items {
		for _, p := range it.Parts {
			if p.Type == model.PartToolCall && p.ToolName != "" {
				if toolCount[p.ToolName] == 0 {
					tools = append(tools, p.ToolName)
				}
				toolCount[p.ToolName]++
				for _, f := range filesIn(inputText(p.Input)) {
					addFile(f)
				}
			}
		}
		content := tagRE.ReplaceAllString(it.Content, " ")
		for _, f := range filesIn(content) {
			addFile(f)
		}
		role := string(it.Role)
		if it.Summary {
			role = "summary"
		}
		first := true
		for _, sent := range splitSentences(content) {
			u := unit{pos: len(units), item: ii, role: role, text: sent}
			u.words = contentWords(sent)
			if len(u.words) < 2 || !isProse(sent) {
				continue
			}
			u.score = cueBonus(sent, u.words, role, first)
			first = false
			units = append(units, u)
		}
	}
	slices.SortStableFunc(tools, func(a, b string) int { return toolCount[b] - toolCount[a] })
	files = dedupeFiles(files)

	var head strings.Builder
	head.WriteString(about)
	head.WriteString(".")
	if len(tools) > 0 {
		head.WriteString("\nTools: ")
		head.WriteString(listSome(tools, 8, func(t string) string {
			if toolCount[t] > 1 {
				return fmt.Sprintf("%s ×%d", t, toolCount[t])
			}
			return t
		}))
		head.WriteString(".")
	}
	if len(files) > 0 {
		head.WriteString("\nFiles: ")
		head.WriteString(listSome(files, 6, func(f string) string { return f }))
		head.WriteString(".")
	}
	text := head.String()
	used := tokens.Count(text)
	if used > budget {
		return cutTokens(text, budget)
	}

	// Rarity: a word in few sentences says more than one in many.
	df := map[string]int{}
	for _, u := range units {
		for _, w := range u.words {
			df[w]++
		}
	}
	n := float64(len(units))
	for k := range units {
		u := &units[k]
		idf := 0.0
		for _, w := range u.words {
			idf += math.Log(1 + n/float64(df[w]))
		}
		u.score += idf / math.Sqrt(float64(len(u.words)))
		if u.role == string(model.RoleTool) {
			u.score *= 0.5
		}
		u.cost = tokens.Count(u.text) + 4
	}
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case units[a].score > units[b].score:
			return -1
		case units[a].score < units[b].score:
			return 1
		}
		return a - b
	})
	var picked []int
	perItem := map[int]int{}
	for _, k := range order {
		u := &units[k]
		if used+u.cost > budget || perItem[u.item] == maxPerItem {
			continue
		}
		if slices.ContainsFunc(picked, func(p int) bool { return nearRepeat(units[p].words, u.words) }) {
			continue
		}
		picked = append(picked, k)
		perItem[u.item]++
		used += u.cost
	}
	slices.Sort(picked)
	var b strings.Builder
	b.WriteString(text)
	if len(picked) > 0 {
		b.WriteString("\n")
	}
	for _, k := range picked {
		fmt.Fprintf(&b, "\n- %s: %s", units[k].role, units[k].text)
	}
	return b.String()
}

// filesIn finds the file names and paths among a text's words.
// Looking at words, not running a pattern over the text, keeps this
// linear: most words have neither a dot nor a slash.
func filesIn(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		if !strings.ContainsAny(w, "./") || strings.Contains(w, "://") {
			continue
		}
		w = strings.TrimLeft(w, "([{<\"'`")
		w = strings.TrimRight(w, ".,;:!?)]}>\"'`")
		if fileRE.MatchString(w) {
			out = append(out, w)
		}
	}
	return out
}

// inputText is the text of a tool call's input: its JSON's strings.
func inputText(input json.RawMessage) string {
	var v any
	if json.Unmarshal(input, &v) != nil {
		return string(input)
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteString(" ")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys) // maps have no order; summaries must
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return b.String()
}

// dedupeFiles drops bare file names that a listed path ends in.
func dedupeFiles(files []string) []string {
	bases := map[string]bool{}
	for _, f := range files {
		if i := strings.LastIndexByte(strings.TrimSuffix(f, "/"), '/'); i >= 0 {
			bases[strings.ToLower(f[i+1:])] = true
		}
	}
	out := files[:0]
	for _, f := range files {
		if !strings.Contains(f, "/") && bases[strings.ToLower(f)] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// splitSentences splits a message's text into sentences, leaving out code
// blocks, tool calls (their names and files are listed apart) and
// markup, and shortening very long ones.
func splitSentences(content string) []string {
	content = codeFence.ReplaceAllString(content, "\n")
	var out []string
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "[tool call ") || strings.HasPrefix(line, "|") || strings.HasPrefix(line, "    ") {
			continue
		}
		line = strings.TrimPrefix(line, "[tool result] ")
		line = strings.TrimPrefix(line, "[tool error] ")
		line = strings.TrimLeft(line, "#>*-+ ")
		if i := strings.IndexFunc(line, func(r rune) bool { return !unicode.IsDigit(r) }); i > 0 && strings.HasPrefix(line[i:], ". ") {
			line = line[i+2:] // a numbered list item
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				// A dot after a one-letter word or inside e.g. is no end.
				if c == '.' && i >= 2 && line[i-2] == ' ' {
					continue
				}
				out = append(out, shortenSentence(strings.TrimSpace(line[start:i+1])))
				start = i + 1
			}
		}
		if rest := strings.TrimSpace(line[start:]); rest != "" {
			out = append(out, shortenSentence(rest))
		}
	}
	return out
}

// isProse reports whether a sentence reads as prose rather than data
// (JSON, logs, tables): mostly letters and spaces.
func isProse(s string) bool {
	if strings.Contains(s, `{"`) || strings.Contains(s, `":`) || strings.Count(s, `"`) >= 6 {
		return false // JSON
	}
	if strings.Count(s, "{")+strings.Count(s, "}")+strings.Count(s, ";")+strings.Count(s, ":=") >= 2 {
		return false // code
	}
	prose, all := 0, 0
	for _, r := range s {
		all++
		if unicode.IsLetter(r) || r == ' ' {
			prose++
		}
	}
	return all > 0 && float64(prose) >= 0.75*float64(all)
}

// shortenSentence cuts a sentence to 40 words.
func shortenSentence(s string) string {
	f := strings.Fields(s)
	if len(f) <= 40 {
		return s
	}
	return strings.Join(f[:40], " ") + " …"
}

// contentWords are a sentence's distinct content words, lower-cased.
func contentWords(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
		if utf8.RuneCountInString(w) < 3 || stopWords[w] || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// cueBonus scores what marks a sentence as worth keeping besides its
// words' rarity.
func cueBonus(s string, words []string, role string, first bool) float64 {
	bonus := 0.0
	cues := 0
	for _, w := range words {
		if cueWords[w] {
			cues++
		}
	}
	bonus += float64(min(cues, 3))
	if len(filesIn(s)) > 0 {
		bonus += 0.5
	}
	if strings.ContainsAny(s, "0123456789") {
		bonus += 0.5
	}
	if strings.Contains(s, "`") {
		bonus += 0.3
	}
	switch role {
	case string(model.RoleUser):
		bonus += 0.5
		if strings.HasSuffix(s, "?") {
			bonus += 0.3
		}
	}
	if first {
		bonus += 0.3
	}
	if len(words) < 4 {
		bonus -= 1
	}
	return bonus
}

// nearRepeat reports whether two sentences share most of their words.
func nearRepeat(a, b []string) bool {
	common := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			common++
		}
	}
	union := len(a) + len(b) - common
	return union > 0 && float64(common)/float64(union) >= 0.7
}

// listSome joins at most n names, saying how many more there are.
func listSome(xs []string, n int, show func(string) string) string {
	parts := make([]string, 0, min(len(xs), n)+1)
	for i, x := range xs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(xs)-n))
			break
		}
		parts = append(parts, show(x))
	}
	return strings.Join(parts, ", ")
}

// cutTokens shortens text, word by word, to at most budget tokens.
func cutTokens(text string, budget int) string {
	words := strings.Fields(text)
	for len(words) > 0 {
		s := strings.Join(words, " ") + " …"
		if tokens.Count(s) <= budget {
			return s
		}
		words = words[:len(words)*9/10]
	}
	return ""
}
