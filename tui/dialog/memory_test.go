package dialog

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops"
	"weft/themes"
)

// M's dialog shows the policy's fields, the seed's for a session with
// none, and what the session's last request through the proxy sent, by
// part; its text reads back as set_memory_policy's arguments.
func TestMemoryDialogText(t *testing.T) {
	t.Parallel()
	st := themes.New(themes.Default(true), true)
	stats := &ops.ProxyStats{Requests: 14, PrefixBreaks: 1, LastSent: &ops.SentParts{System: 3100, Tools: 12400, Summaries: 800, Turns: 9300, ToolOutputs: 4100},
		Usage: &ops.Usage{CacheRead: 25000, CacheWrite: 900, Input: 300}}
	d := NewMemory(st, "limiter", nil, stats, func(string) tea.Cmd { return nil })
	view := ansi.Strip(d.View(200, st))
	for _, want := range []string{"no policy yet", "system 3,100 · tools 12,400 · summaries 800 · turns 9,300 · tool outputs 4,100 tokens", "1 break of the prompt cache's prefix in 14 requests", "read 25,000 input tokens from its cache"} {
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(view, "│", " ")), " "), want) {
			t.Errorf("the dialog does not say %q:\n%s", want, view)
		}
	}
	p := model.DefaultMemoryPolicy()
	p.BudgetTokens, p.ToolOutput = 20000, &model.ToolOutputRule{MinTokens: 2000, OlderThanTurns: 3}
	a, err := MemoryArgs(MemoryText(&p))
	if err != nil || *a.BudgetTokens != 20000 || *a.ToolOutputMinTokens != 2000 || *a.ToolOutputOlderThanTurns != 3 || a.Off {
		t.Errorf("read back: %+v, %v", a, err)
	}
	if a, err := MemoryArgs("off"); err != nil || !a.Off {
		t.Errorf("off: %+v, %v", a, err)
	}
	if _, err := MemoryArgs("max_active_turns=many"); err == nil {
		t.Error("max_active_turns=many was read")
	}
}
