package search

import (
	"strings"

	"weft/model"
	"weft/ops"
	"weft/store"
)

// The filter: an item-level read of a whole thread, picking items by
// role, tag or author, made in a command as the exact search is.

// ItemFilter picks items of an effective thread by role, tag or author.
// A field left empty picks every item; an item must satisfy every field
// given, and, within a field, any of its values.
type ItemFilter struct {
	Roles []model.Role
	Tags  []string // an item carries the tag (model.View.MatchTags: case ignored)
	// Authors match, case ignored and as a part ("claude" finds
	// "claude-code"), a stored message's name or the author of the
	// operation that made a synthetic item.
	Authors []string
}

// Empty reports whether the filter picks every item.
func (f ItemFilter) Empty() bool { return len(f.Roles)+len(f.Tags)+len(f.Authors) == 0 }

// FilterItems returns the indices, in order, of the items of view v that
// f picks. Roles come from the thread's heads, kept in memory; names are
// read from the store only when the filter asks for authors.
func FilterItems(s *ops.Service, v *model.View, f ItemFilter) ([]int, error) {
	snap, err := s.Snapshot(v.SessionID)
	if err != nil {
		return nil, err
	}
	heads := snap.Heads
	var names []string // by seq-1, only with authors
	var opAuthor map[string]string
	if len(f.Authors) > 0 {
		opAuthor = make(map[string]string, len(snap.Ops))
		for _, op := range snap.Ops {
			opAuthor[op.ID] = op.Author
		}
		names = make([]string, len(v.Where))
		err = s.Store().View(func(tx store.Tx) error {
			return tx.Messages(v.SessionID, 1, uint64(len(v.Where)), func(m model.Message) error {
				if m.Seq >= 1 && m.Seq <= uint64(len(names)) {
					names[m.Seq-1] = m.Name
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	// Which items carry a tag is the view's one answer, the one the
	// reads' tags and an edit's tag:NAME give too.
	tagged := v.MatchTags(f.Tags)
	var out []int
	for i, it := range v.Items {
		var role model.Role
		var author string
		if it.Seq > 0 {
			if it.Seq <= uint64(len(heads)) {
				role = model.RoleFromCode(heads[it.Seq-1].Role)
			}
			if names != nil {
				author = names[it.Seq-1]
			}
		} else {
			syn := &v.Synth[it.Synth]
			role, author = syn.Role, opAuthor[syn.OpID]
		}
		if f.picks(role, len(f.Tags) == 0 || tagged.Carries(it), author) {
			out = append(out, i)
		}
	}
	return out, nil
}

// picks reports whether an item of this role and author passes; carries
// is whether it carries one of the filter's tags (true when it names none).
func (f ItemFilter) picks(role model.Role, carries bool, author string) bool {
	anyOf := func(n int, ok func(int) bool) bool {
		if n == 0 {
			return true
		}
		for k := range n {
			if ok(k) {
				return true
			}
		}
		return false
	}
	return anyOf(len(f.Roles), func(k int) bool { return f.Roles[k] == role }) &&
		carries &&
		anyOf(len(f.Authors), func(k int) bool {
			return author != "" && strings.Contains(strings.ToLower(author), strings.ToLower(f.Authors[k]))
		})
}
