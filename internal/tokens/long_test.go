package tokens

import (
	"runtime"
	"strings"
	"testing"
)

// longRuns are single pieces of 2 MB that the codec's merge takes seconds
// and hundreds of megabytes to count; with -short (the race detector's
// run, where the merge takes many times longer) 1 MB, the least that
// Count still counts in segments, in parallel.
func longRuns() []struct{ name, s string } {
	n := 2 << 20
	if testing.Short() {
		n = 2 * segmentMin
	}
	return []struct{ name, s string }{
		{"A", strings.Repeat("A", n)},
		{"ab", strings.Repeat("ab", n/2)},
	}
}

// TestCountLongRuns counts long runs of "A" and of "ab": the count is the
// codec's (whose merge allocates some forty bytes a byte of the run).
func TestCountLongRuns(t *testing.T) {
	t.Parallel()
	for _, run := range longRuns() {
		if got, want := Count(run.s), codecCount(t, run.s); got != want {
			t.Errorf("%s: Count = %d, codec says %d", run.name, got, want)
		}
	}
}

// TestCountLongRunsAllocates: Count allocates less than half a byte a
// byte of a long run. It reads the process's allocations, so it is not
// parallel: no other test runs beside it.
func TestCountLongRunsAllocates(t *testing.T) {
	for _, run := range longRuns() {
		Count(run.s) // builds what is built once
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Count(run.s)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(run.s)/2) {
			t.Errorf("%s: Count of %d bytes allocated %d bytes", run.name, len(run.s), alloc)
		}
	}
}
