package claudecode

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"weft/formats/internal/importtest"
)

// breakLines replaces the given 1-based lines of data with a broken
// record.
func breakLines(data []byte, lines ...int) []byte {
	ls := bytes.Split(data, []byte("\n"))
	for _, n := range lines {
		ls[n-1] = []byte("{broken")
	}
	return bytes.Join(ls, []byte("\n"))
}

func ccKeys(th *importtest.Thread) []string {
	keys := make([]string, len(th.Messages))
	for i, m := range th.Messages {
		keys[i] = m.Key
	}
	return keys
}

// A record that cannot be read does not cut the thread: the walk back
// from the newest leaf goes on across the broken line, from the record
// written before it, so the messages before it are kept.
func TestClaudeCodeJoinsAcrossABrokenLine(t *testing.T) {
	t.Parallel()
	data := importtest.File(t, "../testdata/claude-code/spotter_long_session.jsonl")
	whole := importtest.NewRecorder(t)
	if _, err := Read(bytes.NewReader(data), whole); err != nil {
		t.Fatal(err)
	}
	want := ccKeys(whole.Threads[0])
	if len(want) != 292 {
		t.Fatalf("the whole file: %d messages, want 292", len(want))
	}
	for _, tt := range []struct {
		name   string
		broken []int
		lost   int // messages of the broken records
	}{
		{"an assistant record (one block of a message)", []int{1000}, 0},
		{"a tool result", []int{998}, 1},
		{"three lines in a row: a result and a whole reply", []int{998, 999, 1000}, 2},
		{"two places", []int{998, 1200}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := importtest.NewRecorder(t)
			problems, err := Read(bytes.NewReader(breakLines(data, tt.broken...)), rec)
			if err != nil {
				t.Fatal(err)
			}
			got := ccKeys(rec.Threads[0])
			if len(got) != len(want)-tt.lost {
				t.Errorf("%d messages, want %d", len(got), len(want)-tt.lost)
			}
			// the rest in the same order
			k := 0
			for _, key := range got {
				for k < len(want) && want[k] != key {
					k++
				}
				if k == len(want) {
					t.Fatalf("message %s is out of order or new", key)
				}
			}
			if rec.Threads[0].Info.Key != whole.Threads[0].Info.Key || len(rec.Threads[0].Digests) != len(whole.Threads[0].Digests) {
				t.Errorf("thread %+v, %d digests", rec.Threads[0].Info, len(rec.Threads[0].Digests))
			}
			if len(problems) != len(tt.broken) {
				t.Fatalf("problems %v", problems)
			}
			joined := 0
			for _, p := range problems {
				if !slices.Contains(tt.broken, p.Line) {
					t.Errorf("problem on line %d: %s", p.Line, p)
				}
				if strings.HasSuffix(p.Err, "; the thread is joined across it") {
					joined++
				}
			}
			if joined == 0 {
				t.Errorf("no problem says the thread is joined: %v", problems)
			}
		})
	}
}
