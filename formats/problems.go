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
	firstOut int // line of the first problem not listed
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
		return
	}
	p.list = append(p.list, pr)
}

// Listed is the problems listed so far, for an importer to amend one in
// place when it learns more about it later in the file.
func (p *Problems) Listed() []Problem { return p.list }

// Result is the list to return: the listed problems, and a last one that
// counts those not listed, if any.
func (p *Problems) Result() []Problem {
	if p.dropped == 0 {
		return p.list
	}
	return append(p.list, Problem{Line: p.firstOut, Err: fmt.Sprintf("%d more problems from this line on are not listed", p.dropped), More: p.dropped})
}
