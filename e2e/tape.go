package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

//lint:file-ignore ST1005 a tape's errors begin with the command they are about (Sleep, Type, Env, Set), capitalised as a tape writes it

// A tape is a VHS script: commands, one a line, that type into a
// terminal, wait for its screen and set up the recording. ParseTape reads
// the commands demo.tape uses, so its tour can be replayed through tmux
// where VHS itself cannot run.

// TapeKind is what a tape command does.
type TapeKind int

const (
	TapeOutput     TapeKind = iota + 1 // Output PATH (recording only)
	TapeSet                            // Set NAME VALUE (recording only)
	TapeRequire                        // Require PROGRAM (recording only)
	TapeScreenshot                     // Screenshot PATH (recording only)
	TapeEnv                            // Env NAME "VALUE"
	TapeType                           // Type[@speed] "text" ...
	TapeKey                            // Enter, Ctrl+R, Down@100ms 3, ...
	TapeSleep                          // Sleep DURATION
	TapeHide                           // Hide: stop recording frames
	TapeShow                           // Show: record frames again
	TapeWait                           // Wait[+Line|+Screen][@timeout] [/regexp/]
)

// TapeCommand is one command of a tape.
type TapeCommand struct {
	Line int // 1-based line in the tape
	Kind TapeKind
	// Key is the key's VHS name for TapeKey: "Enter", "Ctrl+R", "Alt+x",
	// "Shift+Tab".
	Key string
	// Text is what Type types, Output's and Screenshot's path, Require's
	// program, Set's and Env's name.
	Text string
	// Value is Set's value as written, and Env's value.
	Value string
	// Count repeats a key (at least 1).
	Count int
	// Speed is Type's or a key's delay between keystrokes; 0 for the
	// tape's default.
	Speed time.Duration
	// Duration is Sleep's length and Wait's timeout (0 for the default).
	Duration time.Duration
	// Screen is true for Wait+Screen (the regexp is matched against the
	// whole screen), false for Wait and Wait+Line (the last line).
	Screen bool
	// Pattern is Wait's regexp as written between the slashes; empty for
	// VHS's default, the shell's prompt.
	Pattern string
	Regexp  *regexp.Regexp
}

// Tape is a parsed tape.
type Tape struct {
	Commands []TapeCommand
}

// tapeKeys are the keys a tape may press by name, with tmux's names.
var tapeKeys = map[string]string{
	"Enter": "Enter", "Escape": "Escape", "Backspace": "BSpace", "Delete": "DC", "Insert": "IC",
	"Tab": "Tab", "Space": "Space", "Up": "Up", "Down": "Down", "Left": "Left", "Right": "Right",
	"PageUp": "PPage", "PageDown": "NPage", "Home": "Home", "End": "End",
}

// tapeRecording are the commands that only shape the recording.
var tapeRecording = map[string]TapeKind{
	"Output": TapeOutput, "Set": TapeSet, "Require": TapeRequire, "Screenshot": TapeScreenshot,
}

// tapeSettings are the names Set accepts.
var tapeSettings = []string{
	"Shell", "FontFamily", "FontSize", "Framerate", "PlaybackSpeed", "Height", "Width",
	"LetterSpacing", "TypingSpeed", "LineHeight", "Padding", "Theme", "LoopOffset",
	"MarginFill", "Margin", "WindowBar", "WindowBarSize", "BorderRadius", "CursorBlink",
	"WaitTimeout", "WaitPattern",
}

// tapeCommandNames lists what a tape line may start with, for errors.
const tapeCommandNames = "Output, Set, Require, Screenshot, Env, Type, Sleep, Hide, Show, Wait, " +
	"Enter, Escape, Backspace, Delete, Insert, Tab, Space, Up, Down, Left, Right, PageUp, PageDown, Home, End, " +
	"Ctrl+KEY, Alt+KEY, Shift+KEY"

// ParseTape reads a tape. An error names the line and says what would be
// right.
func ParseTape(src string) (*Tape, error) {
	t := &Tape{}
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, err := parseTapeLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		cmd.Line = n + 1
		t.Commands = append(t.Commands, cmd)
	}
	return t, nil
}

func parseTapeLine(line string) (TapeCommand, error) {
	word, rest := tapeCut(line)
	name, opts, hasOpts := strings.Cut(word, "@")
	if hasOpts && opts == "" {
		return TapeCommand{}, fmt.Errorf("%q: a time must follow @, as in %s@100ms", word, name)
	}
	switch {
	case name == "Type":
		return parseTapeType(opts, rest)
	case name == "Sleep":
		if hasOpts {
			return TapeCommand{}, fmt.Errorf("Sleep takes no @: write Sleep 500ms")
		}
		arg, extra := tapeCut(rest)
		if arg == "" || extra != "" {
			return TapeCommand{}, fmt.Errorf("Sleep takes one duration, as in Sleep 500ms or Sleep 2s; got %q", rest)
		}
		d, err := parseTapeDuration(arg)
		if err != nil {
			return TapeCommand{}, fmt.Errorf("Sleep: %w", err)
		}
		return TapeCommand{Kind: TapeSleep, Duration: d}, nil
	case name == "Hide" || name == "Show":
		if hasOpts || rest != "" {
			return TapeCommand{}, fmt.Errorf("%s takes nothing after it; got %q", name, strings.TrimPrefix(line, name))
		}
		if name == "Hide" {
			return TapeCommand{Kind: TapeHide}, nil
		}
		return TapeCommand{Kind: TapeShow}, nil
	case name == "Wait" || name == "Wait+Line" || name == "Wait+Screen":
		return parseTapeWait(name, opts, hasOpts, rest)
	case name == "Env":
		if hasOpts {
			return TapeCommand{}, fmt.Errorf("Env takes no @: write Env NAME \"value\"")
		}
		key, value := tapeCut(rest)
		if !tapeEnvName(key) {
			return TapeCommand{}, fmt.Errorf("Env needs a variable name (letters, digits, _) and a quoted value, as in Env TZ \"UTC\"; got %q", rest)
		}
		text, err := parseTapeStrings(value)
		if err != nil {
			return TapeCommand{}, fmt.Errorf("Env %s: %w", key, err)
		}
		return TapeCommand{Kind: TapeEnv, Text: key, Value: text}, nil
	}
	if kind, ok := tapeRecording[name]; ok {
		if hasOpts {
			return TapeCommand{}, fmt.Errorf("%s takes no @", name)
		}
		return parseTapeRecording(kind, name, rest)
	}
	if _, ok := tapeKeys[name]; ok || strings.Contains(name, "+") {
		return parseTapeKey(name, opts, hasOpts, rest)
	}
	return TapeCommand{}, fmt.Errorf("unknown command %q; a tape line starts with one of %s, or # for a comment", word, tapeCommandNames)
}

func parseTapeType(opts, rest string) (TapeCommand, error) {
	cmd := TapeCommand{Kind: TapeType}
	if opts != "" {
		d, err := parseTapeDuration(opts)
		if err != nil {
			return cmd, fmt.Errorf("Type@: %w", err)
		}
		cmd.Speed = d
	}
	text, err := parseTapeStrings(rest)
	if err != nil {
		return cmd, fmt.Errorf("Type: %w", err)
	}
	cmd.Text = text
	return cmd, nil
}

// parseTapeStrings reads one or more quoted strings ("…", '…' or `…`,
// no escapes) and joins them with a space between, as VHS does.
func parseTapeStrings(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("needs a quoted string, as in \"hello\", 'say \"hi\"' or `it's`")
	}
	var parts []string
	for s != "" {
		q := s[0]
		if q != '"' && q != '\'' && q != '`' {
			return "", fmt.Errorf("%q is not a quoted string: quote text with \", ' or `", s)
		}
		// VHS ends a string at its quote or at the end of the line.
		end := strings.IndexAny(s[1:], string(q)+"\r")
		if end < 0 || s[1+end] != q {
			return "", fmt.Errorf("the string %s has no closing %c", s, q)
		}
		parts = append(parts, s[1:1+end])
		rest := s[2+end:]
		s = strings.TrimLeft(rest, " \t")
		if s != "" && len(s) == len(rest) {
			return "", fmt.Errorf("put a space between the strings %c%s%c and %s", q, parts[len(parts)-1], q, s)
		}
	}
	return strings.Join(parts, " "), nil
}

func parseTapeWait(name, opts string, hasOpts bool, rest string) (TapeCommand, error) {
	cmd := TapeCommand{Kind: TapeWait, Screen: name == "Wait+Screen"}
	if hasOpts {
		d, err := parseTapeDuration(opts)
		if err != nil {
			return cmd, fmt.Errorf("%s@: %w", name, err)
		}
		if d <= 0 {
			return cmd, fmt.Errorf("%s@%s: a timeout must be more than 0", name, opts)
		}
		cmd.Duration = d
	}
	if rest == "" {
		return cmd, nil
	}
	if rest[0] != '/' {
		return cmd, fmt.Errorf("%s takes a regexp between slashes, as in %s /done/; got %q", name, name, rest)
	}
	// As in VHS, the regexp ends at the next slash: there is no escape
	// for one inside it (. matches a slash).
	end := strings.IndexByte(rest[1:], '/') + 1
	if end == 0 {
		return cmd, fmt.Errorf("%s: the regexp %s has no closing / (a regexp cannot contain /; use . to match one)", name, rest)
	}
	if extra := strings.TrimSpace(rest[end+1:]); extra != "" {
		return cmd, fmt.Errorf("%s: %q after the regexp; one regexp is all it takes", name, extra)
	}
	cmd.Pattern = rest[1:end]
	if cmd.Pattern == "" {
		return cmd, fmt.Errorf("%s: the regexp // is empty; leave it out to wait for the prompt", name)
	}
	re, err := regexp.Compile(cmd.Pattern)
	if err != nil {
		return cmd, fmt.Errorf("%s: %v", name, err)
	}
	cmd.Regexp = re
	return cmd, nil
}

func parseTapeRecording(kind TapeKind, name, rest string) (TapeCommand, error) {
	cmd := TapeCommand{Kind: kind}
	switch kind {
	case TapeSet:
		setting, value := tapeCut(rest)
		known := false
		for _, s := range tapeSettings {
			known = known || s == setting
		}
		if !known {
			return cmd, fmt.Errorf("Set %q: the settings are %s", setting, strings.Join(tapeSettings, ", "))
		}
		if value == "" {
			return cmd, fmt.Errorf("Set %s needs a value", setting)
		}
		cmd.Text, cmd.Value = setting, value
	default:
		if rest != "" && strings.ContainsAny(rest[:1], "\"'`") {
			text, err := parseTapeStrings(rest)
			if err != nil {
				return cmd, fmt.Errorf("%s: %w", name, err)
			}
			if text == "" {
				return cmd, fmt.Errorf("%s needs a non-empty argument", name)
			}
			cmd.Text = text
			return cmd, nil
		}
		arg, extra := tapeCut(rest)
		if arg == "" || extra != "" {
			return cmd, fmt.Errorf("%s takes one argument (quote it if it has spaces); got %q", name, rest)
		}
		cmd.Text = arg
	}
	return cmd, nil
}

func parseTapeKey(name, opts string, hasOpts bool, rest string) (TapeCommand, error) {
	cmd := TapeCommand{Kind: TapeKey, Key: name, Count: 1}
	if _, err := tapeTmuxKey(name); err != nil {
		return cmd, err
	}
	if hasOpts {
		d, err := parseTapeDuration(opts)
		if err != nil {
			return cmd, fmt.Errorf("%s@: %w", name, err)
		}
		cmd.Speed = d
	}
	if rest != "" {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > 10000 {
			return cmd, fmt.Errorf("%s takes a repeat count from 1 to 10000, as in %s 3; got %q", name, name, rest)
		}
		cmd.Count = n
	}
	return cmd, nil
}

// tapeTmuxKey converts a VHS key name to tmux's.
func tapeTmuxKey(name string) (string, error) {
	if k, ok := tapeKeys[name]; ok {
		return k, nil
	}
	parts := strings.Split(name, "+")
	base := parts[len(parts)-1]
	var prefix strings.Builder
	seen := map[string]bool{}
	for _, mod := range parts[:len(parts)-1] {
		if seen[mod] {
			return "", fmt.Errorf("%q names %s twice", name, mod)
		}
		seen[mod] = true
		switch mod {
		case "Ctrl":
			prefix.WriteString("C-")
		case "Alt":
			prefix.WriteString("M-")
		case "Shift":
			prefix.WriteString("S-")
		default:
			return "", fmt.Errorf("%q: %q is no modifier; use Ctrl+, Alt+ or Shift+, as in Ctrl+R", name, mod)
		}
	}
	switch {
	case base == "":
		return "", fmt.Errorf("%q needs a key after the +, as in Ctrl+R", name)
	case seen["Shift"] && len(parts) == 2 && base == "Tab":
		return "BTab", nil
	case tapeKeys[base] != "":
		return prefix.String() + tapeKeys[base], nil
	case utf8.RuneCountInString(base) == 1 && base != "\"" && base != "'" && base != "`":
		r, _ := utf8.DecodeRuneInString(base)
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return "", fmt.Errorf("%q: the key must be a printable character or a key name", name)
		}
		if seen["Ctrl"] {
			// Control characters have no case: ctrl+R is ctrl+r.
			base = strings.ToLower(base)
		}
		return prefix.String() + base, nil
	}
	return "", fmt.Errorf("%q: after the modifiers comes one character or a key name (%s)", name, tapeKeyNames())
}

func tapeKeyNames() string {
	return "Enter, Escape, Backspace, Delete, Insert, Tab, Space, Up, Down, Left, Right, PageUp, PageDown, Home, End"
}

// TmuxKey is the key's name for tmux send-keys.
func (c TapeCommand) TmuxKey() string {
	k, _ := tapeTmuxKey(c.Key)
	return k
}

var tapeDurationRE = regexp.MustCompile(`^(\d+(?:\.\d+)?|\.\d+)(ms|s|m)?$`)

// parseTapeDuration reads a duration as VHS writes one: a number and
// ms, s or m, or a bare number of seconds.
func parseTapeDuration(s string) (time.Duration, error) {
	m := tapeDurationRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is no duration: write 500ms, 2s, 1m or 1.5 (seconds)", s)
	}
	unit := m[2]
	if unit == "" {
		unit = "s"
	}
	d, err := time.ParseDuration(m[1] + unit)
	if err != nil || d > time.Hour {
		return 0, fmt.Errorf("%q: a duration runs from 0 to an hour", s)
	}
	return d, nil
}

func tapeEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// tapeCut splits off the first word.
func tapeCut(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// String writes the command back as a tape line; ParseTape reads it as
// the same command.
func (c TapeCommand) String() string {
	speed := ""
	if c.Speed > 0 {
		speed = "@" + tapeFormatDuration(c.Speed)
	}
	switch c.Kind {
	case TapeOutput:
		return "Output " + tapeQuoteArg(c.Text)
	case TapeSet:
		return "Set " + c.Text + " " + c.Value
	case TapeRequire:
		return "Require " + tapeQuoteArg(c.Text)
	case TapeScreenshot:
		return "Screenshot " + tapeQuoteArg(c.Text)
	case TapeEnv:
		return "Env " + c.Text + " " + tapeQuote(c.Value)
	case TapeType:
		return "Type" + speed + " " + tapeQuote(c.Text)
	case TapeKey:
		s := c.Key + speed
		if c.Count > 1 {
			s += " " + strconv.Itoa(c.Count)
		}
		return s
	case TapeSleep:
		return "Sleep " + tapeFormatDuration(c.Duration)
	case TapeHide:
		return "Hide"
	case TapeShow:
		return "Show"
	case TapeWait:
		s := "Wait"
		if c.Screen {
			s = "Wait+Screen"
		}
		if c.Duration > 0 {
			s += "@" + tapeFormatDuration(c.Duration)
		}
		if c.Pattern != "" {
			s += " /" + c.Pattern + "/"
		}
		return s
	}
	return fmt.Sprintf("# unknown command kind %d", c.Kind)
}

// tapeFormatDuration writes a duration as a tape does: 500ms, 2s, 1.25s.
func tapeFormatDuration(d time.Duration) string {
	if d%time.Millisecond == 0 && d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	sec, frac := d/time.Second, d%time.Second
	if frac == 0 {
		return strconv.FormatInt(int64(sec), 10) + "s"
	}
	return fmt.Sprintf("%d.%s", sec, strings.TrimRight(fmt.Sprintf("%09d", frac), "0")) + "s"
}

// tapeQuote quotes text for a tape. Text no one quote character can
// enclose is split at spaces into several strings, which a tape joins
// with a space; text that cannot be split so is quoted as well as it can
// be, and parsing it back reports the problem.
func tapeQuote(text string) string {
	var parts []string
	for {
		// The longest prefix, ending at a space or at the end, that one
		// quote character can enclose.
		cut, q := -1, byte(0)
		for i := len(text); i >= 0; i-- {
			if i < len(text) && text[i] != ' ' {
				continue
			}
			if c := tapeQuoteChar(text[:i]); c != 0 {
				cut, q = i, c
				break
			}
		}
		if cut < 0 {
			return strings.Join(append(parts, `"`+text+`"`), " ")
		}
		parts = append(parts, string(q)+text[:cut]+string(q))
		if cut == len(text) {
			return strings.Join(parts, " ")
		}
		text = text[cut+1:]
	}
}

// tapeQuoteChar is a quote character s does not contain, or 0.
func tapeQuoteChar(s string) byte {
	if strings.ContainsRune(s, '\r') {
		return 0
	}
	for _, q := range []byte{'"', '\'', '`'} {
		if strings.IndexByte(s, q) < 0 {
			return q
		}
	}
	return 0
}

// tapeQuoteArg leaves a word bare, as it was read, and quotes anything
// else.
func tapeQuoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s[:1], "\"'`") && strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s
	}
	return tapeQuote(s)
}
