package claudecode

import (
	"testing"

	"weft/model"
)

// A record weft wrote for a system message (a digest's summary, an
// inserted note) reads back as that system message, without the label
// line that told Claude Code's reader what it is; the mark means
// nothing on an assistant record, nor a label on a record without it.
func TestWeftSystemRecords(t *testing.T) {
	t.Parallel()
	rec := func(uuid, parent, typ, content, extra string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"parentUuid":` + p + `,"sessionId":"s1","type":"` + typ + `","uuid":"` + uuid + `","timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"` + typ + `","content":` + content + `}` + extra + "}\n"
	}
	data := rec("u1", "", "user", `"[summary of 3 messages, 2026-03-01 10:00–10:05 UTC]\nWe chose JWT."`, `,"weftRole":"system"`) +
		rec("u2", "u1", "user", `[{"type":"text","text":"[system]\nBe brief."}]`, `,"weftRole":"system"`) +
		rec("u3", "u2", "user", `"[not a label]\nA user's own text."`, "") +
		rec("u4", "u3", "assistant", `[{"type":"text","text":"[x]\nAn answer."}]`, `,"weftRole":"system"`) +
		rec("u5", "u4", "user", `"no label at all"`, `,"weftRole":"system"`)
	th, problems := readCC(t, []byte(data))
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := []struct {
		role    model.Role
		content string
	}{
		{model.RoleSystem, "We chose JWT."},
		{model.RoleSystem, "Be brief."},
		{model.RoleUser, "[not a label]\nA user's own text."},
		{model.RoleAssistant, "[x]\nAn answer."},
		{model.RoleSystem, "no label at all"},
	}
	if len(th.Messages) != len(want) {
		t.Fatalf("%d messages, want %d", len(th.Messages), len(want))
	}
	for i, w := range want {
		if m := th.Messages[i]; m.Role != w.role || m.Content != w.content {
			t.Errorf("message %d: %s %q, want %s %q", i, m.Role, m.Content, w.role, w.content)
		}
	}
}
