package tui

import (
	"context"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Handing the terminal to another program: ctrl+e in a text dialog edits
// its text in $EDITOR, p shows messages in $PAGER. The text is written
// to a temporary file in a command, never in Update; the program runs on
// it with the TUI paused, and the file is removed once it is read back.

// editorDoneMsg is the text back from the editor, or why it failed.
type editorDoneMsg struct {
	text string
	err  error
}

// editorFileMsg names the file a text was written to for the editor.
type editorFileMsg struct{ editor, path string }

// openEditor edits text with the editor command (vi if empty), pausing
// the TUI. The text is written to a file in a command, not in Update;
// runEditor starts the editor on it when that command reports.
func openEditor(editor, text string) tea.Cmd {
	return func() tea.Msg {
		// A text file ends in a newline, as editors write it back
		// (one that adds a line must not join it to the last); it
		// is trimmed again when the text comes back.
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		path, err := writeTemp("weft-*.md", text)
		if err != nil {
			return editorDoneMsg{err: err}
		}
		return editorFileMsg{editor: editor, path: path}
	}
}

// runEditor hands the terminal to the editor on a written file and reads
// the file back when it exits.
func runEditor(msg editorFileMsg) tea.Cmd {
	return execOn(msg.editor, "vi", msg.path, func(err error) tea.Msg {
		if err != nil {
			return editorDoneMsg{err: err}
		}
		b, err := os.ReadFile(msg.path)
		return editorDoneMsg{text: string(b), err: err}
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

// execOn hands the terminal to command (fallback when it is blank), split
// into words as $EDITOR and $PAGER are, with path as its last argument;
// done makes the message of its exit, and the file is removed once done
// has returned (the editor's text is read back in it).
func execOn(command, fallback, path string, done func(error) tea.Msg) tea.Cmd {
	if strings.TrimSpace(command) == "" {
		command = fallback
	}
	args := strings.Fields(command)
	// The program is the user's: only its own exit ends it.
	c := exec.CommandContext(context.Background(), args[0], append(args[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer func() { _ = os.Remove(path) }()
		return done(err)
	})
}
