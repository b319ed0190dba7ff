package export

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"weft/formats"
	"weft/model"
)

// -update rewrites the golden files. It is registered only if no other
// test file of the package has registered it already.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func exUpdateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func exMarkdownItems() []formats.Item {
	at := func(min int) time.Time { return exT0.Add(time.Duration(min) * time.Minute) }
	items := []formats.Item{
		exItem("m1", model.RoleSystem, "You are a careful assistant."),
		exItem("m2", model.RoleUser, "Why does `make` fail?\n\n- it says *missing*\n- twice"),
		exItem("m3", model.RoleAssistant, "",
			exThinking("The user wants the build fixed.", "sig"),
			exText("Let me look at the Makefile."),
			exCall("toolu_01", "Read", `{"path":"Makefile","lines":[1,20]}`)),
		exTool("m4", "Read", exResult("toolu_01", "all:\n\tgo build ./...\n```\nodd fence\n```")),
		exItem("m5", model.RoleAssistant, "", exCall("toolu_02", "Bash", `{"command":"make"}`)),
		exTool("m6", "Bash", exError("toolu_02", "make: *** No rule to make target 'gen'.  Stop.")),
		exSynth("op7/0", model.OpDigest, "Summary: the Makefile lacks a `gen` target; the user agreed to add one."),
		exItem("m9", model.RoleUser, "", exText("Here is the screenshot:"), exImage("image/png", exPNG)),
		exSynth("op8/0", model.OpInsert, "Note to self: check CI too."),
		exNamed(exItem("m10", model.RoleAssistant, "Added it. Run `make` again.\n\n"), "helper"),
		exItem("m11", model.RoleUser, ""),
		exNamed(exItem("m12", model.RoleTool, "plain tool output\n"), "Bash"),
		{ID: "op9/0", Role: model.RoleUser, Content: "Revised question.", Synthetic: true, OpType: model.OpRevise},
	}
	for i := range items {
		if !items[i].Synthetic || items[i].OpType != model.OpRevise {
			items[i].CreatedAt = at(i)
		}
	}
	items[1].Tags = []string{"bug", "build"}
	items[6].Tags = []string{"summary"}
	items[6].CreatedAt = items[6].CreatedAt.In(time.FixedZone("CET", 3600))
	return items
}

func TestWriteMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, "Fixing the build", exMarkdownItems()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "testdata", "golden", "markdown_export.md")
	if exUpdateGolden() {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestWriteMarkdownGolden -update to write it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("markdown differs from %s (rerun with -update if the change is intended)\ngot:\n%s", path, buf.Bytes())
	}
	var again bytes.Buffer
	WriteMarkdown(&again, "Fixing the build", exMarkdownItems())
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two writes of the same items differ")
	}
}

func TestWriteMarkdownEdges(t *testing.T) {
	cases := []struct {
		name  string
		title string
		items []formats.Item
		want  string
	}{
		{"no items, no title", "  ", nil, "# Untitled thread\n"},
		{"title on one line", "a\nb", []formats.Item{{Role: model.RoleUser, Content: "hi"}}, "# a b\n\n### user\n\nhi\n"},
		{"no parts: content as is", "t", []formats.Item{{Role: model.RoleAssistant, Content: "# heading\n<b>x</b> & y"}},
			"# t\n\n### assistant\n\n# heading\n<b>x</b> & y\n"},
		{"long fence", "t", []formats.Item{{Role: model.RoleTool, Parts: []model.Part{exResult("", "````\nx")}}},
			"# t\n\n### tool\n\n**tool result**\n\n`````\n````\nx\n`````\n"},
		{"invalid input kept", "t", []formats.Item{{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartToolCall, ToolName: "f", Input: json.RawMessage("{bad")}}}},
			"# t\n\n### assistant\n\n**tool call** `f`\n\n```json\n{bad\n```\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, c.title, c.items); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, buf.String(), c.want)
		}
	}
}
