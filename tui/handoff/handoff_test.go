package handoff

import (
	"os"
	"testing"
)

func TestTextsAreWrittenAsTheProgramsReadThem(t *testing.T) {
	f, ok := Edit("", "no newline")().(File)
	if !ok || !f.Edits() {
		t.Fatalf("Edit reported %+v", f)
	}
	defer os.Remove(f.Path())
	if b, err := os.ReadFile(f.Path()); err != nil || string(b) != "no newline\n" {
		t.Fatalf("the editor's file holds %q (%v)", b, err)
	}
	p, ok := Page("cat", "a \x1b[2J b\n")().(File)
	if !ok || p.Edits() || p.Command() != "cat" {
		t.Fatalf("Page reported %+v", p)
	}
	defer os.Remove(p.Path())
	if b, err := os.ReadFile(p.Path()); err != nil || string(b) != "a ␛[2J b\n" {
		t.Fatalf("the pager's file holds %q (%v): control characters must show as pictures", b, err)
	}
}
