package dialog

import (
	"fmt"
	"strings"

	"weft/model"
	"weft/ops/search"
	"weft/themes"
)

// The filter (F) shows only the items of a role, a tag or an author; its
// dialog reads what is typed, and refuses, staying open, what it cannot
// read.

// filterSyntax is the filter dialog's note: the syntax it reads.
const filterSyntax = "role:user · tag:db · author:claude (a part of a name) · a,b either · terms of two kinds: both"

// parseFilter reads a filter: space-separated kind:value terms, values
// of one term or of one kind any of them, terms of different kinds all.
func parseFilter(expr string) (search.ItemFilter, error) {
	var f search.ItemFilter
	for _, term := range strings.Fields(expr) {
		kind, vals, ok := strings.Cut(term, ":")
		if !ok || vals == "" {
			return f, fmt.Errorf("%q: write role:, tag: or author: and what to keep (role:user)", term)
		}
		for _, v := range strings.Split(vals, ",") {
			if v == "" {
				continue
			}
			switch strings.ToLower(kind) {
			case "role":
				r := model.Role(strings.ToLower(v))
				if !r.Valid() {
					return f, fmt.Errorf("role %q: a role is user, assistant, system or tool", v)
				}
				f.Roles = append(f.Roles, r)
			case "tag":
				f.Tags = append(f.Tags, strings.TrimPrefix(v, "#"))
			case "author":
				f.Authors = append(f.Authors, v)
			default:
				return f, fmt.Errorf("%q: filter by role:, tag: or author: (role:user)", kind+":")
			}
		}
	}
	return f, nil
}

// NewFilter opens F's dialog, offering the last filter set ("" for
// none) dimmed in the empty input: typing starts a new one, tab takes
// the last in to edit, enter on nothing applies it. Enter on a filter it
// can read asks for it (ActionFilter); on nothing at all, it closes.
func NewFilter(st *themes.Styles, last string) *Input {
	var d *Input
	d = newInput(st, "Filter the thread", filterSyntax, "to filter", "", nil, func(v string) Action {
		if v == "" {
			return ActionClose{}
		}
		by, err := parseFilter(v)
		if err != nil {
			d.Fail(err.Error()) // the dialog stays open with the text, saying what is wrong
			return nil
		}
		return ActionFilter{Expr: v, By: by}
	})
	d.offer(last)
	return d
}
