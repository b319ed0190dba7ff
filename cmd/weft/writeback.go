package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"weft/formats/export"
	"weft/internal/termsafe"
	"weft/ops/tools"
)

// Write-back to Claude Code: weft export --format claude-code writes the
// effective thread as a Claude Code session (export.WriteClaudeCode)
// under a new session ID, to stdout, a file, or with --project straight
// into Claude Code's folder for that project, where `claude --resume`
// finds it.

// claudeConfigDir is Claude Code's own folder: $CLAUDE_CONFIG_DIR, else
// ~/.claude.
func claudeConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".claude"
	}
	return filepath.Join(home, ".claude")
}

// exportClaudeCode is weft export --format claude-code.
func (a *app) exportClaudeCode(ctx context.Context, ref string, raw bool, out, project string) error {
	if project != "" && out != "" {
		return usageErr("give --project or -o, not both: --project writes the file into Claude Code's folder for the project")
	}
	cc := &tools.ClaudeCodeArgs{SessionID: export.NewClaudeCodeSessionID()}
	var err error
	if project != "" {
		if cc.Cwd, err = projectDir(project); err != nil {
			return err
		}
	} else if cc.Cwd, err = os.Getwd(); err != nil {
		return fmt.Errorf("the transcript's records name the project's folder, and the current one cannot be told (%v): give it with --project", err)
	}
	folder := filepath.Join(a.env.claudeDir, "projects", export.ClaudeCodeProjectDir(cc.Cwd))
	if project != "" {
		if err := os.MkdirAll(folder, 0o700); err != nil {
			return fmt.Errorf("making Claude Code's folder for %s: %w", cc.Cwd, err)
		}
		out = filepath.Join(folder, cc.SessionID+".jsonl")
	}
	err = a.withTarget(reading, func(t target) error {
		return exportThread(ctx, t, ref, "claude-code", raw, out, cc, a.stdout, a.stderr)
	})
	if err != nil {
		if project != "" {
			// Half a session in Claude Code's list would be worse than none.
			_ = os.Remove(out)
		}
		return err
	}
	// Said where it is read: on stdout, unless the transcript went there.
	w := a.stdout
	if out == "" {
		w = a.stderr
	}
	cd := "cd " + shellQuote(cc.Cwd) + " && "
	switch {
	case project != "":
		_, _ = fmt.Fprintf(w, "wrote Claude Code session %s to %s\n", cc.SessionID, termsafe.Text(out))
	case out != "":
		_, _ = fmt.Fprintf(w, "wrote Claude Code session %s to %s; Claude Code finds it in %s\n", cc.SessionID, termsafe.Text(out), termsafe.Text(folder))
	default:
		_, _ = fmt.Fprintf(w, "weft: Claude Code session %s; Claude Code finds it as %s\n", cc.SessionID, termsafe.Text(filepath.Join(folder, cc.SessionID+".jsonl")))
	}
	_, _ = fmt.Fprintf(w, "resume it: %sclaude --resume %s\n", termsafe.Text(cd), cc.SessionID)
	return nil
}

// projectDir is the project folder dir as Claude Code records it: the
// absolute path with its links resolved (Claude Code runs in the real
// folder, and names its own folder after that).
func projectDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("--project %s does not exist: name the project's directory, where you run claude", dir)
	case err != nil:
		return "", err
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("--project %s is not a directory: name the project's directory, where you run claude", dir)
	}
	return real, nil
}

// shellQuote quotes s for a POSIX shell where it needs it (as the
// store's messages quote a path).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
