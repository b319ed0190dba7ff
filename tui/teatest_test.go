package tui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgramSmoke runs the whole bubbletea program, not just Update: it
// starts, draws the thread, answers keys, and quits cleanly.
func TestProgramSmoke(t *testing.T) {
	t.Parallel()
	m := fixedModel(t, 100, 30)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	seen := func(want string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			return bytes.Contains([]byte(ansi.Strip(string(b))), []byte(want))
		}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	seen("Rate limiter for the API gateway")
	tm.Send(tea.KeyPressMsg{Code: 'g', Text: "g"})
	seen("digest of 10 messages")
	tm.Send(tea.KeyPressMsg{Code: 'o', Text: "o"})
	// The renderer writes only the cells that change, so wait for a row
	// of the loaded list rather than for the title, whose "Operations"
	// may already be on the screen from the frame before the list came.
	seen("#design on 8 items")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if final.dialogs.Front() != nil || final.cursor != 0 {
		t.Errorf("final state: dialog %v, cursor %d (want none, 0)", final.dialogs.Front(), final.cursor)
	}
}
