package diffview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops/diff"
	"weft/ops/reads"
	"weft/ops/thread"
	"weft/themes"
	"weft/tui/dialog"
)

// sample is the diff of a 40-message thread with two digests and a
// snip, as diff_session gives it.
func sample() reads.DiffSessionResult {
	t0 := time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)
	heads := make([]model.Head, 40)
	for i := range heads {
		heads[i] = model.Head{At: t0.Add(time.Duration(i) * time.Minute).UnixNano(), Tokens: 10, Role: model.RoleUser.Code()}
	}
	ids := func(lo, hi int) []model.ItemID {
		var out []model.ItemID
		for s := lo; s <= hi; s++ {
			out = append(out, model.MessageID(uint64(s)))
		}
		return out
	}
	ops := []model.Op{
		{ID: "d1", Type: model.OpDigest, Targets: ids(2, 9), Active: true, Author: "operator", Payload: model.OpPayload{Summary: "Early.", SummaryTokens: 2}},
		{ID: "s1", Type: model.OpSnip, Targets: ids(20, 21), Active: true, Author: "claude"},
		{ID: "d2", Type: model.OpDigest, Targets: ids(30, 35), Active: true, Author: "memory", Rule: "turns", Payload: model.OpPayload{Summary: "Later.", SummaryTokens: 2}},
	}
	v := thread.Apply(heads, ops, nil)
	d := diff.Compute(v, ops, heads)
	res := reads.DiffSessionResult{Diff: *d, Text: d.Render(func(id model.ItemID) string { return fmt.Sprintf("text of %s", id) })}
	res.Kept = nil // as diff_session gives them: the hunks' own
	return res
}

// fixed is a Differ that reads one diff, or fails.
type fixed struct {
	res reads.DiffSessionResult
	err error
}

func (f fixed) DiffSession(context.Context, reads.DiffSessionArgs) (reads.DiffSessionResult, error) {
	return f.res, f.err
}

// open opens the view over d in an overlay, h lines high, and delivers
// what it read.
func open(t *testing.T, d Differ, h *int) *View {
	t.Helper()
	var o dialog.Overlay
	cmd := Open(&o, d, "s1", "auth design", func() int { return *h })
	v, ok := o.Front().(*View)
	if !ok {
		t.Fatalf("Open put %T in front", o.Front())
	}
	if s := ansi.Strip(v.View(100, themes.New(themes.Default(true), false))); !strings.Contains(s, "reading the diff…") {
		t.Errorf("before the diff comes:\n%s", s)
	}
	msg, ok := cmd().(dialog.Msg)
	if !ok {
		t.Fatalf("the command's answer is no dialog.Msg")
	}
	if d, a := o.Deliver(msg); d != v || a != nil {
		t.Fatalf("delivered to %T, asking %v", d, a)
	}
	return v
}

func press(v *View, keys ...string) dialog.Action {
	var a dialog.Action
	for _, k := range keys {
		msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		if k == "esc" {
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		}
		a = v.HandleMsg(msg)
	}
	return a
}

func TestScrollsAndCloses(t *testing.T) {
	t.Parallel()
	st := themes.New(themes.Default(true), false)
	res := sample()
	res.SessionID = "s1"
	h := 13
	v := open(t, fixed{res: res}, &h)
	screen := v.View(100, st)
	plain := ansi.Strip(screen)
	if n := strings.Count(screen, "\n") + 1; n != 12 {
		t.Errorf("the box is %d lines, want 12 (one less than the thread's 13):\n%s", n, plain)
	}
	for _, want := range []string{"Diff of auth design: stored → effective", "400 → 244 tokens · 24 of 40 messages kept · 3 operations", " ⋯ m1 kept (1 message, 10 tokens)",
		"@@ digest d1 by operator: m2..m9 (8 messages, 80 → 2 tokens) @@", "-m2", "text of m2", "lines 1–7 of", "esc/q close"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the view does not show %q:\n%s", want, plain)
		}
	}
	// The operations' headers are styled apart from the lines under them,
	// the current one (enter goes to it) apart from the others.
	header := Paint("@@ digest d1 by operator: m2..m9 (8 messages, 80 → 2 tokens) @@", st)
	if strings.Contains(screen, header) || !strings.Contains(screen, "@@ digest d1") || header == Paint("-m2", st) || header == Paint("+d1/0", st) {
		t.Errorf("the current header is not styled apart: %q", header)
	}
	press(v, "n")
	other := Paint("@@ digest d2 by memory (rule turns): m30..m35 (6 messages, 60 → 2 tokens) @@", st)
	if screen := v.View(100, st); !strings.Contains(screen, other) || strings.Contains(screen, Paint("@@ snip s1 by claude: m20..m21 (2 messages, 20 → 0 tokens) @@", st)) {
		t.Errorf("after n, the snip is current and the digest below it a header as any:\n%s", ansi.Strip(screen))
	}
	press(v, "g")

	// enter above the first operation goes to it in the thread.
	if a, ok := v.HandleMsg(tea.KeyPressMsg{Code: tea.KeyEnter}).(dialog.ActionJump); !ok || a.Index != res.Hunks[0].At {
		t.Errorf("enter at the top: %#v, want a jump to %d", a, res.Hunks[0].At)
	}
	if press(v, "j", "j"); v.top != 2 {
		t.Errorf("j j: top %d", v.top)
	}
	press(v, "n")
	if l := v.lines[v.top]; !strings.HasPrefix(l, "@@ snip s1 by claude") {
		t.Errorf("n: the top line is %q", l)
	}
	press(v, "j")
	if a, ok := v.HandleMsg(tea.KeyPressMsg{Code: tea.KeyEnter}).(dialog.ActionJump); !ok || a.Index != res.Hunks[1].At {
		t.Errorf("enter among the snip's lines: %#v, want a jump to %d", a, res.Hunks[1].At)
	}
	press(v, "k")
	press(v, "n")
	if l := v.lines[v.top]; !strings.HasPrefix(l, "@@ digest d2 by memory (rule turns)") {
		t.Errorf("n n: the top line is %q", l)
	}
	press(v, "N")
	if l := v.lines[v.top]; !strings.HasPrefix(l, "@@ snip s1") {
		t.Errorf("N: the top line is %q", l)
	}
	press(v, "G")
	last := len(v.lines) - v.rows()
	if v.top != last || !strings.Contains(ansi.Strip(v.View(100, st)), "d2/0") {
		t.Errorf("G: top %d, want %d", v.top, last)
	}
	press(v, "j")
	if v.top != last {
		t.Errorf("j past the end: top %d", v.top)
	}
	// A smaller screen: the box is smaller, from the same line; G goes
	// to the end of it.
	h = 9
	if s := v.View(100, st); strings.Count(s, "\n")+1 != 8 || !strings.Contains(ansi.Strip(s), "lines 19–21 of 25") {
		t.Errorf("on a smaller screen:\n%s", ansi.Strip(s))
	}
	press(v, "G")
	if s := ansi.Strip(v.View(100, st)); !strings.Contains(s, "d2/0") || !strings.Contains(s, "lines 23–25 of 25") {
		t.Errorf("G on a smaller screen:\n%s", s)
	}
	press(v, "g")
	if v.top != 0 {
		t.Errorf("g: top %d", v.top)
	}
	for _, k := range []string{"esc", "q"} {
		if _, ok := press(v, k).(dialog.ActionClose); !ok {
			t.Errorf("%s does not close the view", k)
		}
	}
}

// A short diff gets a short box: its lines, no more.
func TestShortDiffShortBox(t *testing.T) {
	t.Parallel()
	h := 30
	res := reads.DiffSessionResult{SessionID: "s1", Diff: diff.Diff{StoredMessages: 2}, Text: "--- stored     2 messages, 20 tokens\n+++ effective  2 items, 20 tokens\n ⋯ m1..m2 kept (2 messages, 20 tokens)\n"}
	v := open(t, fixed{res: res}, &h)
	if s := v.View(80, themes.New(themes.Default(true), false)); strings.Count(s, "\n")+1 != frame+1 || !strings.Contains(ansi.Strip(s), "m1..m2 kept") {
		t.Errorf("a one-line diff in a box of %d lines:\n%s", strings.Count(s, "\n")+1, ansi.Strip(s))
	}
}

// A diff that cannot be read says why, in the view.
func TestSaysWhyItCannotRead(t *testing.T) {
	t.Parallel()
	h := 20
	v := open(t, fixed{err: errors.New(`session "x" not found`)}, &h)
	if s := ansi.Strip(v.View(100, themes.New(themes.Default(true), false))); !strings.Contains(s, `the diff could not be read: session "x" not found`) {
		t.Errorf("the view:\n%s", s)
	}
}

// Reads of the diff run at once (one after each write to the session),
// and their answers come in any order: an answer of an older version
// than the one shown is passed over.
func TestKeepsTheNewestDiff(t *testing.T) {
	t.Parallel()
	st := themes.New(themes.Default(true), false)
	newer := sample()
	newer.SessionID, newer.Version = "s1", 7
	h := 30
	v := open(t, fixed{res: newer}, &h)
	older := reads.DiffSessionResult{SessionID: "s1", Version: 6, Diff: diff.Diff{StoredMessages: 3, KeptMessages: 3}}
	v.HandleMsg(dialog.For{Dialog: v, Msg: loaded{res: older}})
	if plain := ansi.Strip(v.View(100, st)); !strings.Contains(plain, "24 of 40 messages kept") {
		t.Errorf("an older diff's answer replaced the newer one:\n%s", plain)
	}
	// And one of a newer version is shown.
	v.HandleMsg(dialog.For{Dialog: v, Msg: loaded{res: reads.DiffSessionResult{SessionID: "s1", Version: 8, Diff: diff.Diff{StoredMessages: 3, KeptMessages: 3}}}})
	if plain := ansi.Strip(v.View(100, st)); !strings.Contains(plain, "3 of 3 messages kept") {
		t.Errorf("a newer diff is not shown:\n%s", plain)
	}
}
