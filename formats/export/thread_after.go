package export

// Items read after a head (AnthropicFrom) are read as the rest of the
// thread: what the reader looks up across the thread (a call's tool name
// by its ID, whether a result answers an ID, whether an ID is given out)
// it looks up in the head's record first.

// xpProbe is an ID that a generated call ID of an item was checked
// against the thread's calls for.
type xpProbe struct {
	item int32
	id   string
}

// xpBefore is what reading items takes from the items before them: the
// calls (first of each ID, with its tool name) and results there, the
// call IDs given out there, and the tool names whose renaming was told.
// It is read only: items read after it keep what they add in their own
// xpThread's maps.
type xpBefore struct {
	items   int
	calls   map[string]string
	results map[string]struct{}
	used    map[string]struct{}
	told    map[string]bool
}

// callName is the tool name of the thread's first call with the given
// ID, and whether there is one.
func (x *xpThread) callName(id string) (string, bool) {
	if x.before != nil {
		if name, ok := x.before.calls[id]; ok {
			return name, true
		}
	}
	name, ok := x.calls[id]
	return name, ok
}

// hasResult reports whether a result in the thread answers the call ID.
func (x *xpThread) hasResult(id string) bool {
	return x.before != nil && has(x.before.results, id) || has(x.results, id)
}

// isUsed reports whether a call was given the ID already.
func (x *xpThread) isUsed(id string) bool {
	return x.before != nil && has(x.before.used, id) || has(x.used, id)
}

func has(set map[string]struct{}, id string) bool {
	_, ok := set[id]
	return ok
}
