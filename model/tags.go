package model

import (
	"slices"
	"strings"
)

// Which items carry a tag: one answer for every place that asks (an
// edit's ids of tag:NAME, the reads' tags, the TUI's filter), so that
// they cannot disagree. Tags compare with case ignored.

// TagMatcher says whether an item of one view carries any of some tags.
// It decides once for each of the view's distinct tag lists, so a scan of
// a long thread compares no strings.
type TagMatcher struct {
	v     *View
	carry []bool // by index into v.TagSets
}

// MatchTags returns a matcher of view v for items that carry any of
// tags. With no tags it matches nothing.
func (v *View) MatchTags(tags []string) TagMatcher {
	m := TagMatcher{v: v, carry: make([]bool, len(v.TagSets))}
	for k, set := range v.TagSets {
		m.carry[k] = k > 0 && slices.ContainsFunc(set, func(t string) bool {
			return slices.ContainsFunc(tags, func(want string) bool { return strings.EqualFold(t, want) })
		})
	}
	return m
}

// Carries reports whether an item of the matcher's view carries any of
// its tags.
func (m TagMatcher) Carries(it Item) bool {
	return it.Tags > 0 && int(it.Tags) < len(m.carry) && m.carry[it.Tags]
}

// Tagged returns the indices, in thread order, of the items of the view
// that carry any of tags (case ignored).
func (v *View) Tagged(tags []string) []int {
	m := v.MatchTags(tags)
	var out []int
	for i, it := range v.Items {
		if m.Carries(it) {
			out = append(out, i)
		}
	}
	return out
}

// TagNames returns the distinct tags the items of the effective thread
// carry, sorted.
func (v *View) TagNames() []string {
	used := make([]bool, len(v.TagSets))
	for _, it := range v.Items {
		if it.Tags > 0 && int(it.Tags) < len(used) {
			used[it.Tags] = true
		}
	}
	var out []string
	for k, set := range v.TagSets {
		if !used[k] {
			continue
		}
		for _, t := range set {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
