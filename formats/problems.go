package formats

import "fmt"

// MaxProblems bounds the problems an import lists for one file; the rest
// are counted in a last one.
const MaxProblems = 100

// Problems collects an importer's problems, keeping the list short: past
// MaxProblems they are counted, not listed. The zero value is ready.
type Problems struct {
	list     []Problem
	dropped  int
	notes    int // of those dropped, notes (nothing lost)
	firstOut int // line of the first problem not listed
	// whole: what is said of the file as a whole, listed however many
	// problems came before it.
	whole []Problem
}

// Add adds a record that could not be read, or only in part.
func (p *Problems) Add(line int, msg string) { p.Put(Problem{Line: line, Err: msg}) }

// Note adds a remark where nothing was lost.
func (p *Problems) Note(line int, msg string) { p.Put(Problem{Line: line, Err: msg, Note: true}) }

// Put adds a problem as it is.
func (p *Problems) Put(pr Problem) {
	if len(p.list) >= MaxProblems {
		if p.dropped == 0 {
			p.firstOut = pr.Line
		}
		p.dropped++
		if pr.Note {
			p.notes++
		}
		return
	}
	p.list = append(p.list, pr)
}

// Whole adds a problem about the file as a whole (what a reader left
// out of all of it, counted): it is listed after the others, however
// many there are, and never counted among those not listed.
func (p *Problems) Whole(pr Problem) { p.whole = append(p.whole, pr) }

// Listed is the problems listed so far, for an importer to amend one in
// place when it learns more about it later in the file.
func (p *Problems) Listed() []Problem { return p.list }

// Result is the list to return: the listed problems, those about the
// whole file, and a last one that counts those not listed, if any.
func (p *Problems) Result() []Problem {
	// What is said of the whole file takes the place of the last
	// problems listed, so the list stays as long as MaxProblems allows.
	list, dropped, notes, firstOut := p.list, p.dropped, p.notes, p.firstOut
	if keep := max(MaxProblems-len(p.whole), 0); len(list) > keep {
		dropped += len(list) - keep
		for _, pr := range list[keep:] {
			if pr.Note {
				notes++
			}
		}
		firstOut = list[keep].Line
		list = list[:keep]
	}
	out := append(list[:len(list):len(list)], p.whole...)
	if dropped == 0 {
		return out
	}
	// More counts only what was lost: notes not listed lost nothing.
	last := Problem{Line: firstOut, Err: fmt.Sprintf("%d more problems from this line on are not listed", dropped), More: dropped - notes}
	switch {
	case notes == dropped:
		last.Err, last.Note = fmt.Sprintf("%d more notes from this line on are not listed", dropped), true
	case notes > 0:
		last.Err = fmt.Sprintf("%d more problems from this line on are not listed (%d of them notes, where nothing was lost)", dropped, notes)
	}
	return append(out, last)
}
