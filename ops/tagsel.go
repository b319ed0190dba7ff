package ops

import (
	"slices"
	"strings"

	"weft/model"
)

// TagSelector begins an entry of an edit's ids that stands for the items
// of the effective thread that carry a tag (tag:db). Which items carry
// one is model.View's answer (MatchTags), the reads' and the filter's.
const TagSelector = "tag:"

// selectsByTag reports whether any of ids is a tag:NAME entry.
func selectsByTag(ids []model.ItemID) bool {
	return slices.ContainsFunc(ids, func(id model.ItemID) bool {
		return strings.HasPrefix(string(id), TagSelector)
	})
}

// CheckTags refuses a tag that no item of the effective thread carries,
// naming the tags there are: it is a misspelling far more often than a
// wish for nothing. field names the argument in the refusal (ids, tags).
func CheckTags(v *model.View, field string, tags []string) error {
	have := v.TagNames()
	for _, t := range tags {
		if slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, t) }) {
			continue
		}
		if len(have) == 0 {
			return Invalidf("%s: no item of the effective thread carries tag %q; the session has no tags (tag_messages attaches them)", field, t)
		}
		return Invalidf("%s: no item of the effective thread carries tag %q; the session's tags: %s", field, t, strings.Join(firstN(have, 40), ", "))
	}
	return nil
}

// expandIDs resolves ids, with tag:NAME entries, to indices of v in the
// order given, each tag's items in thread order where the entry stands.
// An item named twice by ID is refused; an item a tag selects that is
// named already (by ID or another tag) is kept where it was first named.
func expandIDs(v *model.View, ids []model.ItemID) ([]int, error) {
	out := make([]int, 0, len(ids))
	have := make(map[int]bool, len(ids))
	seen := make(map[model.ItemID]bool, len(ids))
	for _, id := range ids {
		var idx []int
		if tag, ok := strings.CutPrefix(string(id), TagSelector); ok {
			if err := validTag(tag); err != nil {
				return nil, Invalidf("ids: %q: %v; tag:NAME selects the items carrying the tag NAME", id, err)
			}
			if err := CheckTags(v, "ids", []string{tag}); err != nil {
				return nil, err
			}
			idx = v.Tagged([]string{tag})
		} else {
			if seen[id] {
				return nil, Invalidf("id %q is given twice", id)
			}
			seen[id] = true
			if idx = []int{v.IndexOf(id)}; idx[0] < 0 {
				return nil, NotFoundf("id %q is not in the effective thread: it does not exist or an operation hides it (get_message_range shows the current items)", id)
			}
		}
		for _, j := range idx {
			if !have[j] {
				have[j] = true
				out = append(out, j)
			}
		}
	}
	return out, nil
}
