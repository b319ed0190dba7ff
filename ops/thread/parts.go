package thread

import (
	"runtime"
	"sync"
)

// partMin is the least work worth splitting: below it, starting the
// goroutines costs more than they save.
const partMin = 1 << 16

// inParts runs fn over [0, n) split into one range per core, at once:
// filling a million-message view's tables (materialize's Where) is memory
// work that one core alone does at half the speed two do, and it stands
// between opening a file and its first frame. fn must touch only its own
// range.
func inParts(n int, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/partMin)
	if parts <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := n*k/parts, n*(k+1)/parts
		if k == parts-1 {
			fn(lo, hi) // this goroutine takes the last part itself
			break
		}
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}
