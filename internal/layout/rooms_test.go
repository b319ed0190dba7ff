package layout

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// maxPackageLines is how long a package's non-test Go may be: one
// package is one idea, small enough to read in a sitting. A package
// that grows past it has a second idea that wants a room of its own.
const maxPackageLines = 4000

// TestPackagesStaySmall: no package has more than maxPackageLines lines
// of non-test Go.
func TestPackagesStaySmall(t *testing.T) {
	pkgs, fset := tree(t)
	for _, p := range sortedPkgs(pkgs) {
		n := 0
		for _, f := range p.files {
			n += fset.File(f.Pos()).LineCount()
		}
		if n > maxPackageLines {
			t.Errorf("%s has %d lines of non-test Go; give its second idea a package of its own (at most %d)", p.path, n, maxPackageLines)
		}
	}
}

// screenWords are what only a screen knows: the engine and the faces
// ask and answer in general terms (a default session, a page of
// sessions), whoever shows them.
var screenWords = []string{"tui", "screen", "panel", "dialog", "keystroke", "focus"}

// TestNoScreenWordsInOps: no package, file, identifier or field tag (an
// argument's description, as agents read it) under ops names the
// screen. Names are read as words ("searchTUIView": search, tui, view),
// so a screen word inside another ("intuitive") is not one.
func TestNoScreenWordsInOps(t *testing.T) {
	pkgs, fset := tree(t)
	for _, p := range sortedPkgs(pkgs) {
		if !under(p.path, "weft/ops") {
			continue
		}
		if w := screenWord(filepath.Base(p.path)); w != "" {
			t.Errorf("package %s is named for the screen (%q)", p.path, w)
		}
		for name, f := range p.files {
			if w := screenWord(name); w != "" {
				t.Errorf("%s/%s: the file is named for the screen (%q)", p.path, name, w)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if w := screenWord(n.Name); w != "" {
						t.Errorf("%s: %s names the screen (%q); say it in general terms", fset.Position(n.Pos()), n.Name, w)
					}
				case *ast.Field:
					// A field's tag is what an agent reads of an
					// argument (its jsonschema description).
					if n.Tag != nil {
						if w := screenWord(n.Tag.Value); w != "" {
							t.Errorf("%s: the field's tag names the screen (%q); say it in general terms", fset.Position(n.Tag.Pos()), w)
						}
					}
				}
				return true
			})
		}
	}
}

// screenWord returns the first word of name that is a screen word (or
// begins with one: "focused"), or "".
func screenWord(name string) string {
	for _, w := range words(name) {
		for _, sw := range screenWords {
			if strings.HasPrefix(w, sw) {
				return w
			}
		}
	}
	return ""
}

// words splits an identifier or a file name into lower-cased words: at
// anything not a letter, and where case changes ("searchTUIView":
// search, tui, view; "tui_search.go": tui, search, go).
func words(name string) []string {
	var out []string
	r := []rune(name)
	start := -1
	for i := 0; i <= len(r); i++ {
		letter := i < len(r) && unicode.IsLetter(r[i])
		split := !letter
		if letter && start >= 0 && i > start && unicode.IsUpper(r[i]) {
			// A capital starts a word after a lower-case letter, and
			// ends an acronym before a capitalised word ("TUIView").
			split = unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))
		}
		if split && start >= 0 {
			out = append(out, strings.ToLower(string(r[start:i])))
			start = -1
		}
		if letter && start < 0 {
			start = i
		}
	}
	return out
}

// TestWords: names split into the words a reader sees.
func TestWords(t *testing.T) {
	for name, want := range map[string]string{
		"searchTUIView": "search tui view",
		"tui_search.go": "tui search go",
		"SetFocus":      "set focus",
		"intuitive":     "intuitive",
		"HTTPServer":    "http server",
		"x2y":           "x y",
	} {
		if got := strings.Join(words(name), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", name, got, want)
		}
	}
}
