package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/ops/tools"
	"weft/store"
	"weft/tui"
)

// checkedDB makes a file with a few sessions through the CLI.
func checkedDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "weft.db")
	for i := range 40 {
		if _, code, err := weft(t, db, "new", fmt.Sprintf("session %d", i)); code != 0 {
			t.Fatal(err)
		}
		msgs := fmt.Sprintf(`messages=[{"role":"user","content":"question %d %s"},{"role":"assistant","content":"answer %d"}]`, i, strings.Repeat("x", 400), i)
		if _, code, err := weft(t, db, "call", "append_messages", msgs); code != 0 {
			t.Fatal(err)
		}
	}
	return db
}

func TestCheckAndSalvageCommands(t *testing.T) {
	t.Parallel()
	db := checkedDB(t)
	out, code, err := weft(t, db, "check")
	if code != 0 || out != db+": no problems found\n" {
		t.Fatalf("weft check on a sound file: exit %d, %q, %v", code, out, err)
	}
	out, code, _ = weft(t, db, "check", "--json")
	var res checkResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Sound || len(res.Findings) != 0 {
		t.Errorf("weft check --json: exit %d, %s", code, out)
	}

	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	ps := 4096
	for _, d := range []struct {
		name string
		do   func(b []byte) []byte
	}{
		// Cut in the middle of what it holds (past that, a file has room
		// bbolt grew it by, zeros, which a cut may take without harm).
		{"truncated", func(b []byte) []byte { return b[:len(bytes.TrimRight(b, "\x00"))/2] }},
		// Every page holding a copy of a message (bbolt leaves old
		// copies on free pages), so the live one is among them.
		{"a zeroed page", zeroPagesHolding("question 17 ")},
		{"overwritten bytes", scrambleBefore("question 23 ")},
		{"both header pages", func(b []byte) []byte { clear(b[:2*ps]); return b }},
		{"a branch page pointing at itself", branchesPointingAtThemselves(t)},
	} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			damaged := filepath.Join(dir, "damaged.db")
			if err := os.WriteFile(damaged, d.do(append([]byte(nil), good...)), 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(damaged)
			out, errOut, code, err := runCLI(damaged, "check")
			if code != 1 || out == "" || !strings.Contains(err.Error(), damaged+" is damaged") || !strings.Contains(err.Error(), "weft salvage") {
				t.Errorf("weft check: exit %d, stdout %q, stderr %q, %v", code, out, errOut, err)
			}
			rescued := filepath.Join(dir, "rescued.db")
			out, errOut, code, err = runCLI(damaged, "salvage", rescued)
			if d.name == "both header pages" {
				// Nothing to start reading from.
				if code != 1 || !strings.Contains(errOut, damaged) {
					t.Errorf("weft salvage: exit %d, stderr %q, %v", code, errOut, err)
				}
				return
			}
			if code != 0 || !strings.Contains(out, "copied from "+damaged+" into "+rescued) || !strings.Contains(out, "open it with weft --db "+rescued) {
				t.Fatalf("weft salvage: exit %d, stdout %q, stderr %q, %v", code, out, errOut, err)
			}
			if out, code, err := weft(t, rescued, "check"); code != 0 {
				t.Errorf("the salvaged file does not check clean: %s %v", out, err)
			}
			if _, code, err := weft(t, rescued, "ls"); code != 0 {
				t.Errorf("weft ls on the salvaged file: %v", err)
			}
			// salvage writes a new file only.
			_, errOut, code, _ = runCLI(damaged, "salvage", rescued)
			if code != 1 || !strings.Contains(errOut, "already exists") {
				t.Errorf("salvage over an existing file: exit %d, %q", code, errOut)
			}
			if after, _ := os.ReadFile(damaged); string(after) != string(before) {
				t.Error("check or salvage wrote to the damaged file")
			}
		})
	}

	// Usage.
	if _, code, _ := weft(t, db, "salvage"); code != 2 {
		t.Errorf("weft salvage without OUT: exit %d", code)
	}
	if _, code, _ := weft(t, db, "check", "extra"); code != 2 {
		t.Errorf("weft check extra: exit %d", code)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, code, _ := weft(t, missing, "check"); code != 1 {
		t.Errorf("weft check of a missing file: exit %d", code)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("weft check made the file it was asked to check")
	}
}

// indexAll is where s occurs in b.
func indexAll(b []byte, s string) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(s))
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

func TestCheckAndSalvageHelp(t *testing.T) {
	db := filepath.Join(t.TempDir(), "help.db")
	for cmd, says := range map[string][]string{
		"check":   {"weft check", "--json", "exits 0 when the file is sound"},
		"salvage": {"weft salvage OUT", "placeholder", "weft check"},
	} {
		out, errOut, code, err := runCLI(db, cmd, "--help")
		if code != 0 || errOut != "" || !strings.Contains(out, "USAGE") {
			t.Errorf("weft %s --help: exit %d, %q, %v", cmd, code, errOut, err)
		}
		for _, s := range says {
			if !strings.Contains(out, s) {
				t.Errorf("weft %s --help does not say %q", cmd, s)
			}
		}
	}
}

// branchesPointingAtThemselves damages a file by making every branch
// page (flags 0x01: bbolt leaves old copies on free pages, so the live
// ones are among them) have its second element point at itself: bbolt's
// reads would go round it for ever.
func branchesPointingAtThemselves(t *testing.T) func(b []byte) []byte {
	const ps = 4096
	return func(b []byte) []byte {
		n := 0
		for p := 2; (p+1)*ps <= len(b); p++ {
			page := b[p*ps : (p+1)*ps]
			if page[8] == 0x01 && page[9] == 0 && page[10] >= 2 && int(page[0])|int(page[1])<<8 == p {
				copy(page[16+16+8:], page[:8])
				n++
			}
		}
		if n == 0 {
			t.Fatal("the file has no branch page")
		}
		return b
	}
}

// TestReadsRefuseADamagedBranchPage: on a file whose branch pages point
// at themselves, where bbolt's reads would go round for ever (or until
// the stack overflows, which ends weft), every command that reads the
// file, and the TUI before it takes the screen, ends at once with an
// error that names the damage and says to run weft check and weft
// salvage; weft check and weft salvage themselves read past it.
func TestReadsRefuseADamagedBranchPage(t *testing.T) {
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	started := false
	runTUI = func(context.Context, tools.Desk, tui.Options) error {
		started = true
		return nil
	}
	good, err := os.ReadFile(checkedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.db")
	if err := os.WriteFile(damaged, branchesPointingAtThemselves(t)(good), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{{"ls"}, {"show"}, {"--no-mcp"}}
	for i := range 40 {
		commands = append(commands, []string{"show", fmt.Sprintf("session %d", i)}, []string{"--no-mcp", fmt.Sprintf("session %d", i)})
	}
	for _, args := range commands {
		started = false
		_, errOut, code, err := runCLI(damaged, args...)
		if started {
			t.Errorf("weft %q started the TUI on a damaged file", args)
		}
		if code != 1 || !errors.Is(err, store.ErrDamaged) {
			t.Fatalf("weft %q: exit %d, %v, want the file refused as damaged", args, code, err)
		}
		for _, want := range []string{damaged + " is damaged", `bucket "`, "weft check --db " + damaged, "weft salvage --db " + damaged + " OUT"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("weft %q: stderr does not say %q:\n%s", args, want, errOut)
			}
		}
	}
	out, _, code, _ := runCLI(damaged, "check")
	if code != 1 || !strings.Contains(out, `bucket "msgs": page `) {
		t.Errorf("weft check: exit %d, %s", code, out)
	}
	rescued := filepath.Join(dir, "rescued.db")
	if out, _, code, err := runCLI(damaged, "salvage", rescued); code != 0 || !strings.Contains(out, "40 sessions") {
		t.Errorf("weft salvage: exit %d, %s, %v", code, out, err)
	}
}

// zeroPagesHolding damages a file by zeroing every page that holds
// needle: bbolt leaves old copies of a record on free pages, so the live
// one is among them.
func zeroPagesHolding(needle string) func(b []byte) []byte {
	const ps = 4096
	return func(b []byte) []byte {
		for _, at := range indexAll(b, needle) {
			clear(b[at/ps*ps : (at/ps+1)*ps])
		}
		return b
	}
}

// scrambleBefore damages a file by flipping bits in the 16 bytes before
// every copy of needle: the lengths and fields of the record holding it.
func scrambleBefore(needle string) func(b []byte) []byte {
	return func(b []byte) []byte {
		for _, at := range indexAll(b, needle) {
			for i := at - 16; i < at; i++ {
				b[i] ^= 0x5a
			}
		}
		return b
	}
}
