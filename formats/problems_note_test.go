package formats_test

import (
	"bytes"
	"testing"

	"weft/formats"

	"weft/formats/chatgpt"
	"weft/formats/internal/importtest"
	"weft/formats/sharegpt"
)

// A Problem that lost nothing (a conversation with nothing to import, an
// empty record) is a Note; a record that could not be imported is not.
func TestProblemsTellNotesFromLosses(t *testing.T) {
	rec := importtest.NewRecorder(t)
	problems, err := chatgpt.Read(bytes.NewReader(importtest.File(t, "testdata/chatgpt-export/chatlore_conversations_edge_cases.json")), rec)
	if err != nil {
		t.Fatal(err)
	}
	var notes, losses []string
	for _, p := range problems {
		if p.Note {
			notes = append(notes, p.String())
		} else {
			losses = append(losses, p.String())
		}
	}
	if len(losses) != 1 || len(notes) != 1 {
		t.Fatalf("losses %q, notes %q; want the conversation without a mapping lost, the empty one noted", losses, notes)
	}

	in := `[{"conversations":[]},` +
		`{"id":"a","conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":""}]},` +
		`{"id":"a","conversations":[{"from":"human","value":"hi again"}]},` +
		`{"conversations":[{"from":"alien","value":"?"},{"from":"human","value":"ok"}]}]`
	problems, err = sharegpt.Read(bytes.NewReader([]byte(in)), importtest.NewRecorder(t))
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, p := range problems {
		if !p.Note {
			lost++
		}
	}
	if lost != 1 || len(problems) != 4 {
		t.Errorf("problems %v: want 4, of which 1 (the unknown role) a loss", problems)
	}
}

// Notes past the listed ones are not counted as lost records: a file
// with many notes and no problems is not "imported in part".
func TestProblemsNotListedKeepNotesApart(t *testing.T) {
	var notes formats.Problems
	for i := range formats.MaxProblems + 30 {
		notes.Note(i+1, "a note")
	}
	r := notes.Result()
	if last := r[len(r)-1]; !last.Note || last.More != 0 || last.Err != "30 more notes from this line on are not listed" {
		t.Errorf("many notes: last %+v", last)
	}
	var mixed formats.Problems
	for i := range formats.MaxProblems + 30 {
		if i%2 == 0 {
			mixed.Note(i+1, "a note")
		} else {
			mixed.Add(i+1, "unreadable")
		}
	}
	r = mixed.Result()
	if last := r[len(r)-1]; last.Note || last.More != 15 || last.Err != "30 more problems from this line on are not listed (15 of them notes, where nothing was lost)" {
		t.Errorf("mixed: last %+v", last)
	}
}
