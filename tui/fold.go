package tui

import "strings"

// linesPastCut is how many lines of a long text a folded render left
// out: the render reads only the start (cutSource cuts at the last line
// break before mdFoldSource), so the fold's count adds the source lines
// past the cut, about as many as they make rendered.
func linesPastCut(s string) int {
	if len(s) <= mdFoldSource {
		return 0
	}
	i := strings.LastIndexByte(s[:mdFoldSource], '\n')
	if i <= 0 {
		i = mdFoldSource
	}
	return strings.Count(s[i:], "\n")
}
