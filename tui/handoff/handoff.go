// Package handoff hands the terminal to another program on a text:
// $EDITOR to edit it (ctrl+e in a text dialog), $PAGER to read it (p).
// The text is written to a temporary file in a command, never in
// Update; from Update, the program runs on the file with the TUI paused,
// and the file is removed once it has been read back.
package handoff

import (
	"context"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/internal/termsafe"
)

// File is a text written for a program: Run, returned from Update,
// hands the terminal to the program on it.
type File struct {
	command, fallback, path string
	edit                    bool // for the editor: the text is read back
}

// Command is the program's command as it was given ($EDITOR's or
// $PAGER's; blank for the fallback).
func (f File) Command() string { return f.command }

// Path is the file the text was written to.
func (f File) Path() string { return f.path }

// Edits reports whether the file is for the editor.
func (f File) Edits() bool { return f.edit }

// Edited is the text back from the editor, or why it could not be
// edited.
type Edited struct {
	Text string
	Err  error
}

// Paged is the pager's exit: why it failed, or nil.
type Paged struct {
	Err error
}

// Edit writes text for the editor command (vi when it is blank), in a
// command that reports the File, or an Edited with why it could not be
// written.
func Edit(editor, text string) tea.Cmd {
	return func() tea.Msg {
		// A text file ends in a newline, as editors write it back
		// (one that adds a line must not join it to the last); it
		// is trimmed again when the text comes back.
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		path, err := writeTemp("weft-*.md", text)
		if err != nil {
			return Edited{Err: err}
		}
		return File{command: editor, fallback: "vi", path: path, edit: true}
	}
}

// Page writes text for the pager command (less when it is blank), in a
// command that reports the File, or a Paged with why it could not be
// written. What the thread carries is shown, not obeyed, by the pager
// as on the screen: control characters become pictures (a pager such as
// cat would pass them on).
func Page(pager, text string) tea.Cmd {
	return func() tea.Msg {
		path, err := writeTemp("weft-*.txt", termsafe.Text(text))
		if err != nil {
			return Paged{err}
		}
		return File{command: pager, fallback: "less", path: path}
	}
}

// Run hands the terminal to the file's program, split into words as
// $EDITOR and $PAGER are, with the file as its last argument. When it
// exits, the editor's text is read back (Edited) or the pager's exit
// reported (Paged), and the file is removed.
func (f File) Run() tea.Cmd {
	command := f.command
	if strings.TrimSpace(command) == "" {
		command = f.fallback
	}
	args := strings.Fields(command)
	// The program is the user's: only its own exit ends it.
	c := exec.CommandContext(context.Background(), args[0], append(args[1:], f.path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer func() { _ = os.Remove(f.path) }()
		if !f.edit {
			return Paged{err}
		}
		if err != nil {
			return Edited{Err: err}
		}
		b, err := os.ReadFile(f.path)
		return Edited{Text: string(b), Err: err}
	})
}

// writeTemp writes text to a new temporary file named after pattern and
// returns its path; when it fails no file is left. It does I/O: it is
// called in a command, never in Update.
func writeTemp(pattern, text string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
