package claudecode

import (
	"fmt"
	"strings"
	"testing"

	"weft/formats"
)

// ccLine is a record of a made-up session: second sec of the day,
// parent "" for a root.
func ccLine(typ, uuid, parent string, sec int, extra string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":%q,"uuid":%q,"parentUuid":%s,"sessionId":"S","timestamp":"2026-01-01T10:00:%02dZ"%s}`+"\n", typ, uuid, p, sec, extra)
}

func ccSays(role, uuid, parent string, sec int, text string) string {
	extra := fmt.Sprintf(`,"message":{"role":%q,"content":%q}`, role, text)
	if role == "assistant" {
		extra = fmt.Sprintf(`,"message":{"id":"m-%s","role":"assistant","model":"m","content":%q}`, uuid, text)
	}
	return ccLine(role, uuid, parent, sec, extra)
}

// A rewind leaves the branch it abandoned in the file; weft imports the
// active one and says, in a note, how many branches and records it left
// out and where the first begins. A progress chain hanging off the
// thread and a subagent's records are not branches of the conversation.
func TestClaudeCodeReportsAbandonedBranches(t *testing.T) {
	t.Parallel()
	in := ccSays("user", "u", "", 0, "start") + // line 1
		ccSays("assistant", "a", "u", 1, "ready") + // 2
		ccSays("user", "x1", "a", 2, "first try") + // 3: abandoned by the first rewind
		ccSays("assistant", "x2", "x1", 3, "first answer") +
		ccSays("user", "x3", "x2", 4, "more") +
		ccSays("assistant", "x4", "x3", 5, "more answer") +
		ccSays("user", "y1", "a", 6, "second try") + // 7: the rewind to a
		ccSays("assistant", "y2", "y1", 7, "second answer") +
		ccSays("user", "y3", "y2", 8, "a question taken back") + // 9: abandoned by the second rewind
		ccLine("progress", "p1", "y2", 8, `,"data":{}`) + // a progress chain: not a branch
		ccLine("progress", "p2", "p1", 8, `,"data":{}`) +
		ccLine("user", "s1", "y2", 8, `,"isSidechain":true,"message":{"role":"user","content":"subagent"}`) +
		ccSays("user", "z1", "y2", 9, "the question asked") + // 13
		ccSays("assistant", "z2", "z1", 10, "the answer")
	th, problems := readCC(t, []byte(in))
	checkCCThread(t, th)
	if got := strings.Join(ccKeys(th), " "); got != "u a y1 y2 z1 z2" {
		t.Fatalf("thread %s", got)
	}
	want := formats.Problem{Line: 3, Note: true,
		Err: "2 abandoned branches (5 records) were not imported: weft imports the active branch, the one with the newest record; the first abandoned branch starts here, at record x1"}
	if len(problems) != 1 || problems[0] != want {
		t.Fatalf("problems %q, want %q", problems, []formats.Problem{want})
	}

	// One branch: said in the singular.
	one := ccSays("user", "u", "", 0, "start") + ccSays("assistant", "a", "u", 1, "ready") +
		ccSays("user", "x1", "a", 2, "first try") + ccSays("user", "y1", "a", 3, "second try")
	_, problems = readCC(t, []byte(one))
	if len(problems) != 1 || problems[0].Line != 3 || !problems[0].Note ||
		problems[0].Err != "1 abandoned branch (1 record) was not imported: weft imports the active branch, the one with the newest record; the abandoned branch starts here, at record x1" {
		t.Fatalf("one branch: problems %q", problems)
	}

	// No rewind, no note.
	_, problems = readCC(t, []byte(ccSays("user", "u", "", 0, "start")+ccSays("assistant", "a", "u", 1, "ready")))
	if len(problems) != 0 {
		t.Fatalf("no rewind: problems %q", problems)
	}
}
