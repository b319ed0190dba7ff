package tui

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops"
)

// Counts are shown with thousands separators.
func TestCountsHaveThousandsSeparators(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 30)
	mk := &model.Marker{OpType: model.OpDigest, Author: "claude-code", Hidden: make([]model.Item, 90000)}
	if got := ansi.Strip(m.paint().Marker(m.view, mk, 100, false)); !strings.Contains(got, "digest of 90,000 messages") {
		t.Errorf("marker: %q", got)
	}
}

// A long summary folds with a count of what is folded, as every folded
// message does.
func TestLongSummaryFoldSaysHowMuchMore(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 40)
	var b strings.Builder
	for i := range 300 {
		b.WriteString("Finding ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(": the limiter held.\n")
	}
	start, end := 3, 5
	if _, err := svc.DigestMessages(context.Background(), ops.DigestArgs{Selection: ops.Selection{SessionID: m.sid, StartIdx: &start, EndIdx: &end}, Summary: b.String()}); err != nil {
		t.Fatal(err)
	}
	run(t, m, m.loadView(m.sid))
	press(t, m, "g")
	for range 6 {
		press(t, m, "j")
	}
	s := screen(m)
	if strings.Contains(s, "… more (enter)") {
		t.Fatalf("the summary's fold says no count:\n%s", s)
	}
	re := regexp.MustCompile(`… about (\d+) more lines \(enter\)`)
	sub := re.FindStringSubmatch(s)
	if sub == nil {
		t.Fatalf("no counted fold:\n%s", s)
	}
	if n, _ := strconv.Atoi(sub[1]); n < 250 || n > 300 {
		t.Errorf("the fold counts %d more lines of a 300-line summary", n)
	}
}

// A huge message of one line folds with the count of the lines it wraps
// to, not of the line breaks in it.
func TestHugeOneLineMessageFoldCountsWrappedLines(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 40)
	huge := strings.Repeat("lorem ipsum dolor sit amet ", 5<<20/27)
	if _, err := svc.AppendMessages(context.Background(), ops.AppendMessagesArgs{SessionID: m.sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: huge}}}); err != nil {
		t.Fatal(err)
	}
	run(t, m, m.loadView(m.sid))
	press(t, m, "G")
	s := screen(m)
	sub := regexp.MustCompile(`… about ([\d,]+) more lines \(enter\)`).FindStringSubmatch(s)
	if sub == nil {
		t.Fatalf("no counted fold:\n%s", s)
	}
	// Wrapped at about 106 cells: some 49,000 lines.
	if n, _ := strconv.Atoi(strings.ReplaceAll(sub[1], ",", "")); n < 45_000 || n > 55_000 {
		t.Errorf("the fold counts %s more lines of a %d-byte line", sub[1], len(huge))
	}
}
