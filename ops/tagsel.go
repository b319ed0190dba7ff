package ops

import (
	"slices"
	"strings"

	"weft/model"
)

// Selecting by tag: an entry tag:NAME in an edit's ids stands for the
// items of the effective thread that carry the tag, and the reads' tags
// keep only such items. Which items carry a tag is model.View's answer
// (MatchTags), the one the TUI's filter gives too.

// TagSelector begins an entry of ids that selects the items carrying a
// tag (tag:db).
const TagSelector = "tag:"

// selectsByTag reports whether any of ids is a tag:NAME entry.
func selectsByTag(ids []model.ItemID) bool {
	return slices.ContainsFunc(ids, func(id model.ItemID) bool {
		return strings.HasPrefix(string(id), TagSelector)
	})
}

// tagOf returns the tag a tag:NAME entry names, checked, or ok false for
// an item ID.
func tagOf(id model.ItemID) (tag string, ok bool, err error) {
	name, ok := strings.CutPrefix(string(id), TagSelector)
	if !ok {
		return "", false, nil
	}
	if err := validTag(name); err != nil {
		return "", true, Invalidf("ids: %q: %v; tag:NAME selects the items carrying the tag NAME", id, err)
	}
	return name, true, nil
}

// SelectTagged returns the indices, in thread order, of the items of v
// that carry any of tags (case ignored), after CheckTags.
func SelectTagged(v *model.View, field string, tags []string) ([]int, error) {
	if err := CheckTags(v, field, tags); err != nil {
		return nil, err
	}
	return v.Tagged(tags), nil
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
		tag, isTag, err := tagOf(id)
		if err != nil {
			return nil, err
		}
		if isTag {
			tagged, err := SelectTagged(v, "ids", []string{tag})
			if err != nil {
				return nil, err
			}
			for _, j := range tagged {
				if !have[j] {
					have[j] = true
					out = append(out, j)
				}
			}
			continue
		}
		if seen[id] {
			return nil, Invalidf("id %q is given twice", id)
		}
		seen[id] = true
		j := v.IndexOf(id)
		if j < 0 {
			return nil, NotFoundf("id %q is not in the effective thread: it does not exist or an operation hides it (get_message_range shows the current items)", id)
		}
		if !have[j] {
			have[j] = true
			out = append(out, j)
		}
	}
	return out, nil
}
