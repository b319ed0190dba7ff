package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops"
)

// hostile carries what an imported thread may: a window title, a
// clipboard write, a screen clear, and a carriage return that goes back
// over the line.
const hostile = "\x1b]0;pwned\x07 \x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J \r\x1b[1A\x1b[K \x1b[31mred\u009b2J"

// hostileModel opens the TUI on a session whose title, messages, names,
// and operations' authors carry hostile (tags refuse control characters).
func hostileModel(t *testing.T) (*Model, *ops.Service) {
	t.Helper()
	svc := newService(t)
	ctx := context.Background()
	s, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "evil " + hostile})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []model.NewMessage
	for i := range 6 {
		msgs = append(msgs, model.NewMessage{Role: []model.Role{model.RoleUser, model.RoleAssistant, model.RoleTool}[i%3], Name: "n" + hostile, Content: "before " + hostile + "\nsecond\tline " + hostile})
	}
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: s.SessionID, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	sel := func(a, b int) ops.Selection { return ops.Selection{SessionID: s.SessionID, StartIdx: &a, EndIdx: &b} }
	agent := ops.WithAuthor(ctx, "agent "+hostile)
	if _, err := svc.TagMessages(agent, ops.TagArgs{Selection: sel(0, 1), Tags: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DigestMessages(agent, ops.DigestArgs{Selection: sel(1, 2), Summary: "sum " + hostile}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetActiveTags(ctx, ops.SetActiveTagsArgs{SessionID: s.SessionID, Tags: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	return openModel(t, svc, Options{Theme: "dark"}, "", 120, 40), svc
}

// obeyed lists what in a frame would act on the terminal: every control
// character but newline, and every escape sequence but the SGR styling
// the TUI draws with.
func obeyed(frame string) []string {
	var found []string
	state := byte(0)
	for len(frame) > 0 {
		seq, _, n, newState := ansi.DecodeSequence(frame, state, nil)
		state = newState
		switch {
		case n == 0:
			return found
		case ansi.HasCsiPrefix(seq) && strings.HasSuffix(seq, "m"):
		case len(seq) == 1 && seq[0] < 0x20 && seq[0] != '\n':
			found = append(found, seq)
		case strings.ContainsAny(seq, "\x1b\x07\u009b\u009d"):
			found = append(found, seq)
		}
		frame = frame[n:]
	}
	return found
}

// The TUI shows what a thread carries without letting it act on the
// terminal: not in the window title, the rows, the status bar, the
// dialogs, the search or the sessions list; what was there shows as
// pictures (␛ for ESC).
func TestHostileTextIsShownNotObeyed(t *testing.T) {
	t.Parallel()
	m, _ := hostileModel(t)
	check := func(state string, shows ...string) {
		t.Helper()
		v := m.View()
		if bad := obeyed(v.Content); len(bad) > 0 {
			t.Errorf("%s: the frame carries %q", state, bad)
		}
		if bad := obeyed(v.WindowTitle); len(bad) > 0 || !strings.HasPrefix(v.WindowTitle, "weft · evil ") {
			t.Errorf("%s: window title %q", state, v.WindowTitle)
		}
		plain := ansi.Strip(v.Content)
		for _, want := range shows {
			if !strings.Contains(plain, want) {
				t.Errorf("%s: the screen does not show %q:\n%s", state, want, plain)
			}
		}
	}
	check("thread", "␛]0;pwned␇", "␛[2J", "evil ␛]0;pwned␇")
	press(t, m, "g", "enter") // the first item unfolded
	check("top")
	press(t, m, "j", "enter") // the digest's marker, expanded
	check("marker")
	press(t, m, "R")
	check("raw view", "by agent ␛]0")
	press(t, m, "R", "o")
	check("operations", "agent ␛]0;pw")
	press(t, m, "esc", "/")
	typeText(t, m, "before")
	check("search")
	send(t, m, keyEsc)
	press(t, m, "G", "r")
	check("revise dialog")
	send(t, m, keyEsc)
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	check("sessions", "evil ␛]0;pwned␇")
	send(t, m, keyEsc)
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: "elsewhere", What: "import " + hostile, Author: "x" + hostile}))
	run(t, m, cmd)
	m.flash("said "+hostile, true)
	check("status")
}

// The TUI shows the characters that reorder or hide text as marks
// (\u202e) in the rows, the status bar and the window title: a title
// "invoice \u202efdp.exe" would read "invoice exe.pdf" otherwise.
func TestReorderingTextIsShown(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := context.Background()
	const body = "pay\u200bpal \u2066isolated\u2069 \u202aembedded\u202c \u200emark\u200f \u061carabic \u200c\u200d\u2060 \ufeffbom"
	s, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "invoice \u202efdp.exe"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: s.SessionID, Messages: []model.NewMessage{{Role: model.RoleUser, Content: body}}}); err != nil {
		t.Fatal(err)
	}
	m := openModel(t, svc, Options{Theme: "dark"}, "", 120, 40)
	press(t, m, "g", "enter")
	m.flash("renamed “invoice \u202efdp.exe”", false)
	v := m.View()
	for _, r := range v.Content + v.WindowTitle {
		if (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x061c || r == 0x2060 || r == 0xfeff {
			t.Errorf("the screen carries %U raw", r)
		}
	}
	if want := `weft · invoice \u202efdp.exe`; v.WindowTitle != want {
		t.Errorf("window title %q, want %q", v.WindowTitle, want)
	}
	plain := ansi.Strip(v.Content)
	for _, want := range []string{`invoice \u202efdp.exe`, `renamed “invoice \u202efdp.exe”`, `pay\u200bpal \u2066isolated\u2069`, `\ufeffbom`} {
		if !strings.Contains(plain, want) {
			t.Errorf("the screen does not show %q:\n%s", want, plain)
		}
	}
}
