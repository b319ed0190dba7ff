package dialog

import (
	"slices"
	"testing"

	"weft/model"
	"weft/ops"
)

// The session picker shows forks under their source, deeper forks
// deeper; a fork whose source is not listed stays where it was.
func TestSessionsShowForksUnderTheirSource(t *testing.T) {
	fork := func(id, of string) ops.SessionOut {
		return ops.SessionOut{SessionID: id, ForkOf: &model.Fork{SessionID: of}}
	}
	list := []ops.SessionOut{fork("d", "b"), {SessionID: "c"}, fork("b", "a"), fork("e", "gone"), {SessionID: "a"}}
	titles := []string{"D", "C", "B", "E", "A"}
	all, names, depth := branches(list, titles)
	var ids []string
	for _, x := range all {
		ids = append(ids, x.SessionID)
	}
	if !slices.Equal(ids, []string{"c", "e", "a", "b", "d"}) || !slices.Equal(names, []string{"C", "E", "A", "B", "D"}) || !slices.Equal(depth, []int{0, 0, 0, 1, 2}) {
		t.Errorf("order %v, titles %v, depth %v", ids, names, depth)
	}
}
