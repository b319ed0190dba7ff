package e2e

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTapeParseCommands(t *testing.T) {
	src := strings.Join([]string{
		"# a comment, then a blank line",
		"",
		"Output demo.gif",
		`Output "my demo.gif"`,
		"Require go",
		"Set FontSize 16",
		`Set Theme "Catppuccin Mocha"`,
		`Set Theme { "name": "x", "background": "#000000" }`,
		`Env TZ "UTC"`,
		`Type "weft demo"`,
		`Type@50ms 'say "hi"'`,
		"Type `it's` \"and\" 'more'",
		"Enter",
		"Escape",
		"Backspace 3",
		"Tab",
		"Space",
		"Down@100ms 5",
		"Up",
		"Left 2",
		"Right",
		"PageDown",
		"Ctrl+R",
		"Ctrl+s",
		"Alt+x",
		"Alt+Enter",
		"Ctrl+Alt+d",
		"Shift+Tab",
		"Sleep 500ms",
		"Sleep 2s",
		"Sleep 1.5",
		"Hide",
		"Show",
		"Wait",
		"Wait+Line /done/",
		`Wait+Screen@20s /at 243.243/`,
		"Screenshot shot.png",
		"   Enter   ",
	}, "\n")
	tape, err := ParseTape(src)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		line  int
		kind  TapeKind
		text  string
		tmux  string
		count int
		dur   time.Duration
	}
	wants := []want{
		{3, TapeOutput, "demo.gif", "", 0, 0},
		{4, TapeOutput, "my demo.gif", "", 0, 0},
		{5, TapeRequire, "go", "", 0, 0},
		{6, TapeSet, "FontSize", "", 0, 0},
		{7, TapeSet, "Theme", "", 0, 0},
		{8, TapeSet, "Theme", "", 0, 0},
		{9, TapeEnv, "TZ", "", 0, 0},
		{10, TapeType, "weft demo", "", 0, 0},
		{11, TapeType, `say "hi"`, "", 0, 50 * time.Millisecond},
		{12, TapeType, `it's and more`, "", 0, 0},
		{13, TapeKey, "", "Enter", 1, 0},
		{14, TapeKey, "", "Escape", 1, 0},
		{15, TapeKey, "", "BSpace", 3, 0},
		{16, TapeKey, "", "Tab", 1, 0},
		{17, TapeKey, "", "Space", 1, 0},
		{18, TapeKey, "", "Down", 5, 100 * time.Millisecond},
		{19, TapeKey, "", "Up", 1, 0},
		{20, TapeKey, "", "Left", 2, 0},
		{21, TapeKey, "", "Right", 1, 0},
		{22, TapeKey, "", "NPage", 1, 0},
		{23, TapeKey, "", "C-r", 1, 0},
		{24, TapeKey, "", "C-s", 1, 0},
		{25, TapeKey, "", "M-x", 1, 0},
		{26, TapeKey, "", "M-Enter", 1, 0},
		{27, TapeKey, "", "C-M-d", 1, 0},
		{28, TapeKey, "", "BTab", 1, 0},
		{29, TapeSleep, "", "", 0, 500 * time.Millisecond},
		{30, TapeSleep, "", "", 0, 2 * time.Second},
		{31, TapeSleep, "", "", 0, 1500 * time.Millisecond},
		{32, TapeHide, "", "", 0, 0},
		{33, TapeShow, "", "", 0, 0},
		{34, TapeWait, "", "", 0, 0},
		{35, TapeWait, "", "", 0, 0},
		{36, TapeWait, "", "", 0, 20 * time.Second},
		{37, TapeScreenshot, "shot.png", "", 0, 0},
		{38, TapeKey, "", "Enter", 1, 0},
	}
	if len(tape.Commands) != len(wants) {
		t.Fatalf("parsed %d commands, want %d: %+v", len(tape.Commands), len(wants), tape.Commands)
	}
	for i, w := range wants {
		c := tape.Commands[i]
		dur := c.Duration
		if c.Kind == TapeType || c.Kind == TapeKey {
			dur = c.Speed
		}
		if c.Line != w.line || c.Kind != w.kind || c.Text != w.text || c.Count != w.count || dur != w.dur {
			t.Errorf("command %d (%q) parsed as %+v, want %+v", i, c.String(), c, w)
		}
		if c.Kind == TapeKey && c.TmuxKey() != w.tmux {
			t.Errorf("line %d: %s is tmux key %q, want %q", c.Line, c.Key, c.TmuxKey(), w.tmux)
		}
	}
	if c := tape.Commands[5]; c.Value != `{ "name": "x", "background": "#000000" }` {
		t.Errorf("Set Theme with JSON kept %q", c.Value)
	}
	if c := tape.Commands[6]; c.Value != "UTC" {
		t.Errorf("Env TZ kept %q", c.Value)
	}
	if c := tape.Commands[31]; c.Screen || c.Pattern != "" || c.Regexp != nil {
		t.Errorf("a bare Wait is %+v, want the last line and the default prompt", c)
	}
	if c := tape.Commands[32]; c.Screen || c.Pattern != "done" || !c.Regexp.MatchString("all done") {
		t.Errorf("Wait+Line /done/ is %+v", c)
	}
	if c := tape.Commands[33]; !c.Screen || !c.Regexp.MatchString("x at 243/243 y") {
		t.Errorf(`Wait+Screen /at 243.243/ is %+v, and must match "at 243/243"`, c)
	}
}

func TestTapeParseErrors(t *testing.T) {
	cases := []struct {
		src, want string
	}{
		{"Typo \"x\"", `line 1: unknown command "Typo"`},
		{"Output a.gif\n\nType", "line 3: Type: needs a quoted string"},
		{"Type weft", `line 1: Type: "weft" is not a quoted string`},
		{`Type "weft`, "line 1: Type: the string \"weft has no closing \""},
		{"Type@ \"x\"", "line 1: \"Type@\": a time must follow @"},
		{"Type@fast \"x\"", `line 1: Type@: "fast" is no duration`},
		{"Sleep", "line 1: Sleep takes one duration"},
		{"Sleep soon", `line 1: Sleep: "soon" is no duration`},
		{"Sleep -1s", `line 1: Sleep: "-1s" is no duration`},
		{"Sleep 61m", `line 1: Sleep: "61m": a duration runs from 0 to an hour`},
		{"Sleep 1h", `line 1: Sleep: "1h" is no duration`},
		{"Sleep 1.2.3", `line 1: Sleep: "1.2.3" is no duration`},
		{"Wait@0s", "line 1: Wait@0s: a timeout must be more than 0"},
		{`Wait /a\/b/`, `line 1: Wait: "b/" after the regexp`},
		{`Type "a""b"`, `line 1: Type: put a space between the strings "a" and "b"`},
		{"Type \"a\rb\"", `line 1: Type: the string "a`},
		{"Sleep 1s 2s", "line 1: Sleep takes one duration"},
		{"Enter 0", "line 1: Enter takes a repeat count from 1 to 10000"},
		{"Down x", `line 1: Down takes a repeat count from 1 to 10000, as in Down 3; got "x"`},
		{"Ctrl+", `line 1: "Ctrl+" needs a key after the +`},
		{"Hyper+x", `line 1: "Hyper+x": "Hyper" is no modifier`},
		{"Ctrl+Ctrl+x", `line 1: "Ctrl+Ctrl+x" names Ctrl twice`},
		{"Ctrl+xy", `line 1: "Ctrl+xy": after the modifiers comes one character or a key name`},
		{"Hide now", "line 1: Hide takes nothing after it"},
		{"Wait+Screen done", "line 1: Wait+Screen takes a regexp between slashes"},
		{"Wait /abc", "line 1: Wait: the regexp /abc has no closing /"},
		{"Wait /a(/", "line 1: Wait: error parsing regexp"},
		{"Wait /a/ /b/", `line 1: Wait: "/b/" after the regexp`},
		{"Wait //", "line 1: Wait: the regexp // is empty"},
		{"Wait+Screen@ /x/", `line 1: "Wait+Screen@": a time must follow @`},
		{"Set Colour red", `line 1: Set "Colour": the settings are`},
		{"Set FontSize", "line 1: Set FontSize needs a value"},
		{"Output", "line 1: Output takes one argument"},
		{"Output a b", "line 1: Output takes one argument"},
		{"Env 1X \"y\"", "line 1: Env needs a variable name"},
		{"Env X y", `line 1: Env X: "y" is not a quoted string`},
		{"Copy \"x\"", `line 1: unknown command "Copy"`},
		{"Enter\nEnter\nEscape@", "line 3: \"Escape@\": a time must follow @"},
	}
	for _, c := range cases {
		tape, err := ParseTape(c.src)
		if err == nil {
			t.Errorf("ParseTape(%q) = %+v, want an error", c.src, tape)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseTape(%q) error\n  %v\nwant it to start with\n  %s", c.src, err, c.want)
		}
	}
}

// TestTapeRoundTrip writes every command back and reads it again.
func TestTapeRoundTrip(t *testing.T) {
	tape, err := ParseTape("Output demo.gif\nSet Width 1200\nType \"a'b\" `\"c`\nCtrl+R\nDown@10ms 3\nSleep 1.25\nWait+Screen@3s /x.y/\nEnv A \"b c\"\nScreenshot \"a b.png\"")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tape.Commands {
		again, err := ParseTape(c.String())
		if err != nil {
			t.Fatalf("%q does not parse again: %v", c.String(), err)
		}
		if !sameTapeCommand(c, again.Commands[0]) {
			t.Errorf("%q parsed again as %+v, want %+v", c.String(), again.Commands[0], c)
		}
	}
}

func TestTapeQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `say "hi"`, "it's", "`tick`", "all \"three' `quotes", "\" '`", "'''", " padded  "} {
		tape, err := ParseTape("Type " + tapeQuote(s))
		if err != nil {
			t.Fatalf("Type %s: %v", tapeQuote(s), err)
		}
		if got := tape.Commands[0].Text; got != s {
			t.Errorf("Type %s typed %q, want %q", tapeQuote(s), got, s)
		}
	}
}

// sameTapeCommand compares commands but for their line and compiled
// regexp (its pattern is compared).
func sameTapeCommand(a, b TapeCommand) bool {
	a.Line, b.Line = 0, 0
	a.Regexp, b.Regexp = nil, nil
	return reflect.DeepEqual(a, b)
}

func FuzzParseTape(f *testing.F) {
	for _, seed := range []string{
		"Output demo.gif\nSet FontSize 16\nType \"weft demo\"\nEnter\nSleep 1s\nWait+Screen /at \\d+/\n",
		"Type@20ms 'x' \"y\" `z`\nCtrl+R\nAlt+Enter\nShift+Tab\nDown@5ms 3\nHide\nShow\nWait\n",
		"Env TZ \"UTC\"\nScreenshot \"a b.png\"\nRequire go\nSet Theme { \"name\": \"x\" }\n",
		"Wait /a.b/\nSleep 0.5\n# comment\n\n",
		"Type \"unterminated\nSleep -1\nCtrl+\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tape, err := ParseTape(src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line number: %v", err)
			}
			return
		}
		// Every command reads back as itself from the line it writes.
		for _, c := range tape.Commands {
			line := c.String()
			if strings.Contains(line, "\n") {
				t.Fatalf("%+v writes more than one line: %q", c, line)
			}
			again, err := ParseTape(line)
			if err != nil {
				t.Fatalf("line %d %+v writes %q, which does not parse: %v", c.Line, c, line, err)
			}
			if len(again.Commands) != 1 || !sameTapeCommand(c, again.Commands[0]) {
				t.Fatalf("line %d %+v writes %q, which parses as %+v", c.Line, c, line, again.Commands)
			}
			if c.Kind == TapeKey && c.TmuxKey() == "" {
				t.Fatalf("line %d: key %q has no tmux name", c.Line, c.Key)
			}
			if c.Kind == TapeWait && (c.Pattern == "") != (c.Regexp == nil) {
				t.Fatalf("line %d: Wait pattern %q but regexp %v", c.Line, c.Pattern, c.Regexp)
			}
		}
	})
}
