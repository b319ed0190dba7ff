package ops

import (
	"fmt"
	"slices"
	"strings"

	"weft/model"
)

// checkNamed is the version check of an edit that names its items by ID
// (ids, after_id): the session may have changed since the version the
// caller saw, as long as nothing changed the named items. They must all
// still be in the effective thread, standing together (the TUI's
// selections are runs of the thread, so nothing may have come in among
// them, nor have been taken out from among them), and no operation made
// since may act on one of them. Then the edit lands on exactly those
// items, whatever else an agent did meanwhile; otherwise it is refused
// with what changed.
func checkNamed(info *model.Session, ops []model.Op, v *model.View, expected *uint64, ids []model.ItemID) error {
	if expected == nil || *expected == info.Version {
		return nil
	}
	if _, complete := info.ChangesSince(*expected); *expected > info.Version || !complete {
		// Ahead of the session, or too far behind to tell what changed.
		return checkVersion(info, expected)
	}
	named := make(map[model.ItemID]bool, len(ids))
	for _, id := range ids {
		named[id] = true
	}
	refuse := func(reason string) error {
		return Conflictf("%s since version %d, so the edit was not made: %s. Read the thread again and choose the items anew", reason, *expected, ChangesSince(info, *expected))
	}
	// Newest first: the latest operation on them is the one to name.
	for i := len(ops) - 1; i >= 0 && ops[i].Version > *expected; i-- {
		op := &ops[i]
		hit := op.Anchor != "" && named[op.Anchor]
		for _, t := range op.Targets {
			if hit {
				break
			}
			hit = named[t]
		}
		if hit {
			return refuse(fmt.Sprintf("%s %s by %s (v%d) acts on %s", op.Type, op.ID, op.Author, op.Version, describeNamed(op, named)))
		}
	}
	idx := make([]int, len(ids))
	for k, id := range ids {
		if idx[k] = v.IndexOf(id); idx[k] < 0 {
			return refuse(fmt.Sprintf("%s is no longer in the effective thread", id))
		}
	}
	slices.Sort(idx)
	if idx[len(idx)-1]-idx[0] != len(idx)-1 {
		return refuse(fmt.Sprintf("the %d items named no longer stand together (they are now spread over indices %d–%d)", len(ids), idx[0], idx[len(idx)-1]))
	}
	return nil
}

// describeNamed lists which of the named items an operation acts on.
func describeNamed(op *model.Op, named map[model.ItemID]bool) string {
	var hit []string
	if op.Anchor != "" && named[op.Anchor] {
		hit = append(hit, string(op.Anchor))
	}
	for _, t := range op.Targets {
		if named[t] && !slices.Contains(hit, string(t)) {
			hit = append(hit, string(t))
		}
	}
	return strings.Join(firstN(hit, 5), ", ")
}
