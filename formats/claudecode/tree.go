package claudecode

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"weft/formats"
	"weft/internal/english"
	"weft/model"
)

// The tree of a session's records: finding the active branch, joining it
// across broken lines, taking in the false forks of parallel tool calls.

// isEntry reports whether node i carries conversation (or is a system
// record), rather than linking others.
func (rd *ccReader) isEntry(i int32) bool { return rd.nodes[i].kind != ccLink }

// newer reports whether node a is newer than node b: by time, then by
// place in the file.
func (rd *ccReader) newer(a, b int32) bool {
	na, nb := &rd.nodes[a], &rd.nodes[b]
	if na.at != nb.at {
		return na.at > nb.at
	}
	return na.line > nb.line
}

func (rd *ccReader) build() *ccThread {
	n := int32(len(rd.nodes))
	nodes := rd.nodes
	var joins []ccJoin
	for i, id := range rd.pending {
		if p, ok := rd.index[id]; ok && p != i {
			nodes[i].parent = p
		} else if !ok {
			if j, ok := rd.join(i); ok {
				joins = append(joins, j)
			}
		}
	}
	rd.pending = nil
	var unlinked []int32 // compact boundaries whose logical parent is not in the file
	for i := int32(0); i < n; i++ {
		if nodes[i].flags&ccBoundary == 0 {
			continue
		}
		if id, ok := rd.logical[i]; ok {
			if p, ok := rd.index[id]; ok && p != i {
				nodes[i].parent = p
				continue
			}
		}
		if nodes[i].parent < 0 {
			unlinked = append(unlinked, i)
		}
	}

	// hasChild: an entry with another entry below it (through links) is
	// not a leaf.
	hasChild := make([]bool, n)
	memo := make([]int32, n)
	for i := range memo {
		memo[i] = -2
	}
	var stack []int32
	// above returns the nearest entry at or above i, or -1.
	above := func(i int32) int32 {
		stack = stack[:0]
		cur := i
		for cur >= 0 && memo[cur] == -2 && !rd.isEntry(cur) {
			memo[cur] = -3
			stack = append(stack, cur)
			cur = nodes[cur].parent
		}
		res := int32(-1)
		switch {
		case cur < 0:
		case rd.isEntry(cur):
			res = cur
		case memo[cur] >= 0 || memo[cur] == -1:
			res = memo[cur]
		}
		for _, s := range stack {
			memo[s] = res
		}
		return res
	}
	for i := int32(0); i < n; i++ {
		if rd.isEntry(i) && nodes[i].parent >= 0 {
			if a := above(nodes[i].parent); a >= 0 && a != i {
				hasChild[a] = true
			}
		}
	}

	// A boundary whose logical parent is missing goes on from the newest
	// leaf written before it.
	if len(unlinked) > 0 {
		var h ccHeap
		h.rd = rd
		next := 0
		for _, b := range unlinked {
			for ; int32(next) < b; next++ {
				j := int32(next)
				if rd.isEntry(j) && !hasChild[j] && nodes[j].flags&ccSidechain == nodes[b].flags&ccSidechain {
					heap.Push(&h, j)
				}
			}
			for h.Len() > 0 {
				c := heap.Pop(&h).(int32)
				if !hasChild[c] {
					nodes[b].parent = c
					hasChild[c] = true
					break
				}
			}
		}
	}

	// The active leaf.
	leaf := int32(-1)
	for pass := 0; pass < 3 && leaf < 0; pass++ {
		for i := int32(0); i < n; i++ {
			if !rd.isEntry(i) {
				continue
			}
			switch pass {
			case 0:
				if hasChild[i] || nodes[i].flags&ccSidechain != 0 {
					continue
				}
			case 1:
				if hasChild[i] {
					continue
				}
			}
			if leaf < 0 || rd.newer(i, leaf) {
				leaf = i
			}
		}
	}
	th := &ccThread{}
	if leaf < 0 {
		return th
	}

	// The path from the root to the leaf.
	onPath := make([]bool, n)
	var path []int32
	for cur := leaf; cur >= 0 && !onPath[cur]; cur = nodes[cur].parent {
		onPath[cur] = true
		path = append(path, cur)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}

	for _, j := range joins {
		if onPath[j.node] {
			rd.joined(j.line)
		}
	}

	order := rd.absorb(path, onPath)
	rd.abandoned(order, leaf)
	rd.assemble(th, order, path, leaf)
	return th
}

// abandoned notes the branches of the conversation left out of the
// thread (what a rewind abandons): the user and assistant records that
// are not taken, grouped by the topmost record not taken above each.
// Records of the other kind than the leaf's (a subagent's, beside the
// main thread) and branches without a message (a progress chain) are
// not branches of this conversation, and are not counted.
func (rd *ccReader) abandoned(order []int32, leaf int32) {
	nodes := rd.nodes
	n := int32(len(nodes))
	const unknown, walking = -2, -3
	top := make([]int32, n) // for a node not taken: the topmost node not taken above it
	for i := range top {
		top[i] = unknown
	}
	for _, i := range order {
		top[i] = -1 // taken
	}
	var stack []int32
	// branchOf finds i's topmost untaken ancestor, remembering it for
	// every node on the way; a loop of parents ends the walk where it
	// closes.
	branchOf := func(i int32) int32 {
		stack = stack[:0]
		cur := i
		for top[cur] == unknown {
			top[cur] = walking
			stack = append(stack, cur)
			p := nodes[cur].parent
			if p < 0 || top[p] == -1 || top[p] == walking {
				break
			}
			cur = p
		}
		root := cur
		if t := top[cur]; t >= 0 {
			root = t
		}
		for _, s := range stack {
			top[s] = root
		}
		return root
	}
	side := nodes[leaf].flags & ccSidechain
	branches := map[int32]bool{}
	records := 0
	first := int32(-1)
	for i := int32(0); i < n; i++ {
		nd := &nodes[i]
		if top[i] == -1 || (nd.kind != ccUser && nd.kind != ccAssistant) || nd.flags&ccSidechain != side {
			continue
		}
		branches[branchOf(i)] = true
		records++
		if first < 0 {
			first = i
		}
	}
	if records == 0 {
		return
	}
	var msg string
	if len(branches) == 1 {
		msg = fmt.Sprintf("1 abandoned branch (%s) was not imported: weft imports the active branch, the one with the newest record; the abandoned branch starts here, at record %s",
			english.Count(records, "record"), nodes[first].uuid)
	} else {
		msg = fmt.Sprintf("%d abandoned branches (%s) were not imported: weft imports the active branch, the one with the newest record; the first abandoned branch starts here, at record %s",
			len(branches), english.Count(records, "record"), nodes[first].uuid)
	}
	rd.problems.Whole(formats.Problem{Line: int(nodes[first].line), Err: msg, Note: true})
}

// ccJoin is a record whose parent was not found, joined across the
// broken line before it.
type ccJoin struct {
	node int32
	line int32 // the broken line
}

// join links record i, whose parent is in no record read, across the
// nearest line before it that could not be read: Claude Code appends
// records in order, so the parent was most likely on that line, and its
// own parent the record before it. Record i hangs off the nearest record
// before that line (of its own kind: a subagent's or the main thread's),
// so a broken line does not cut off everything before it. Without a
// broken line before it, i stays a root.
func (rd *ccReader) join(i int32) (ccJoin, bool) {
	nodes := rd.nodes
	line := nodes[i].line
	b, _ := slices.BinarySearch(rd.broken, line)
	if b == 0 {
		return ccJoin{}, false
	}
	bad := rd.broken[b-1]
	// the nodes are in file order: the last one before the broken line
	j, _ := slices.BinarySearchFunc(nodes, bad, func(nd ccNode, l int32) int { return cmp.Compare(nd.line, l) })
	side := nodes[i].flags & ccSidechain
	for j--; j >= 0 && nodes[j].flags&ccSidechain != side; j-- {
	}
	if j < 0 {
		return ccJoin{}, false
	}
	// no loop: i must not be above j
	for cur, steps := int32(j), 0; cur >= 0 && steps <= len(nodes); cur, steps = nodes[cur].parent, steps+1 {
		if cur == i {
			return ccJoin{}, false
		}
	}
	nodes[i].parent = int32(j)
	return ccJoin{node: i, line: bad}, true
}

// joined says in the broken line's problem that the thread goes on
// across it.
func (rd *ccReader) joined(line int32) {
	const says = "; the thread is joined across it"
	listed := rd.problems.Listed()
	for k := range listed {
		if p := &listed[k]; p.Line == int(line) && !strings.HasSuffix(p.Err, says) {
			p.Err += says
			return
		}
	}
}

// absorb returns the path with the false forks of parallel tool calls
// taken in where they hang off it.
func (rd *ccReader) absorb(path []int32, onPath []bool) []int32 {
	nodes := rd.nodes
	n := int32(len(nodes))
	// children, in file order
	start := make([]int32, n+1)
	for i := int32(0); i < n; i++ {
		if p := nodes[i].parent; p >= 0 {
			start[p+1]++
		}
	}
	for i := int32(0); i < n; i++ {
		start[i+1] += start[i]
	}
	kids := make([]int32, start[n])
	fill := append([]int32(nil), start[:n]...)
	for i := int32(0); i < n; i++ {
		if p := nodes[i].parent; p >= 0 {
			kids[fill[p]] = i
			fill[p]++
		}
	}

	msgIDs := map[string]bool{}
	calls := map[string]bool{}
	answered := map[string]bool{}
	forked := false
	for _, i := range path {
		rec := nodes[i].rec
		if start[i+1]-start[i] > 1 {
			forked = true
		}
		if rec == nil {
			continue
		}
		if nodes[i].kind == ccAssistant {
			if rec.msgID != "" {
				msgIDs[rec.msgID] = true
			}
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					calls[p.ToolCallID] = true
				}
			}
		}
		for _, res := range rec.results {
			answered[res.parts[0].ToolCallID] = true
		}
	}
	if !forked {
		return path
	}

	seen := make([]bool, n)
	order := make([]int32, 0, len(path))
	var sub, dfs []int32
	for _, x := range path {
		order = append(order, x)
		for _, c := range kids[start[x]:start[x+1]] {
			if onPath[c] || seen[c] {
				continue
			}
			// the side subtree, in preorder with children in file order
			sub, dfs = sub[:0], append(dfs[:0], c)
			for len(dfs) > 0 {
				s := dfs[len(dfs)-1]
				dfs = dfs[:len(dfs)-1]
				if seen[s] || onPath[s] {
					continue
				}
				seen[s] = true
				sub = append(sub, s)
				ks := kids[start[s]:start[s+1]]
				for k := len(ks) - 1; k >= 0; k-- {
					dfs = append(dfs, ks[k])
				}
			}
			if rd.parallelFork(sub, msgIDs, calls, answered) {
				order = append(order, sub...)
			}
		}
	}
	return order
}

// parallelFork reports whether a side subtree is a false fork left by
// parallel tool calls: made only of more records of the branch's own API
// responses and of results for calls not yet answered on the branch.
func (rd *ccReader) parallelFork(sub []int32, msgIDs, calls, answered map[string]bool) bool {
	var own map[string]bool // calls made in the subtree
	useful := false
	for _, s := range sub {
		nd := &rd.nodes[s]
		switch nd.kind {
		case ccSystem:
			if nd.flags&ccBoundary != 0 {
				return false
			}
		case ccAssistant:
			if nd.rec.msgID == "" || !msgIDs[nd.rec.msgID] {
				return false
			}
			for _, p := range nd.rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					if own == nil {
						own = map[string]bool{}
					}
					own[p.ToolCallID] = true
				}
			}
			useful = true
		}
	}
	for _, s := range sub {
		nd := &rd.nodes[s]
		if nd.kind != ccUser {
			continue
		}
		rec := nd.rec
		if rec.compactSummary || len(rec.results) == 0 || len(rec.parts) > 0 {
			return false
		}
		for _, res := range rec.results {
			id := res.parts[0].ToolCallID
			if id == "" || answered[id] || !(calls[id] || own[id]) {
				return false
			}
		}
		useful = true
	}
	if !useful {
		return false
	}
	for _, s := range sub {
		if rec := rd.nodes[s].rec; rec != nil {
			for _, res := range rec.results {
				answered[res.parts[0].ToolCallID] = true
			}
		}
	}
	return true
}

// ccHeap orders leaf candidates newest first.
type ccHeap struct {
	rd *ccReader
	s  []int32
}

func (h *ccHeap) Len() int           { return len(h.s) }
func (h *ccHeap) Less(i, j int) bool { return h.rd.newer(h.s[i], h.s[j]) }
func (h *ccHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *ccHeap) Push(x any)         { h.s = append(h.s, x.(int32)) }
func (h *ccHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
