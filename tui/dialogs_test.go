package tui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
)

func TestDigestDraft(t *testing.T) {
	m, svc := demoModel(t, 110, 36)
	press(t, m, "g", "j", "j", "v", "j", "j", "j", "d")
	d, ok := m.dialog.(*textDialog)
	if !ok || d.draft == nil {
		t.Fatalf("digest dialog without a drafter: %T", m.dialog)
	}
	send(t, m, tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	draft := d.area.Value()
	if strings.TrimSpace(draft) == "" || !strings.Contains(screen(m), "draft by extractive") {
		t.Fatalf("no draft:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpDigest || op.Payload.Summary != strings.TrimSpace(draft) && op.Payload.Summary != draft {
		t.Fatalf("digest made from the draft: %+v", op)
	}
}

func TestEditorFailureIsShown(t *testing.T) {
	m, svc := demoModel(t, 110, 36)
	n := len(mustOps(t, svc, m.sid))
	press(t, m, "d")
	m.Update(editorDoneMsg{err: errors.New(`exec: "nano": executable file not found in $PATH`)})
	if s := screen(m); !strings.Contains(s, "editor: exec") {
		t.Fatalf("editor error not shown:\n%s", s)
	}
	m.Update(editorDoneMsg{text: "From the editor.\n"})
	if v := m.dialog.(*textDialog).area.Value(); v != "From the editor." {
		t.Fatalf("editor text %q", v)
	}
	send(t, m, keyEsc)
	if len(mustOps(t, svc, m.sid)) != n {
		t.Fatal("esc after the editor made an operation")
	}
}
