//go:build unix

package tokens

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time the process has used so far. Benchmarks report
// it per op too ("cpu-ns/op"), which other load on the machine disturbs far
// less than the wall time ns/op.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCountTokens: "codec" is the tokenizer's own Count on the whole
// message (the old count), "split" is Count. Each op counts one
// 200-byte message, a different one each time. "split-cold" empties the
// piece cache before each pass over the 4096 messages, so it pays for every
// first sight of a piece, as an import of new text does.
func BenchmarkCountTokens(b *testing.B) {
	c := codec()
	impls := []struct {
		name  string
		count func(string) int
	}{
		{"codec", func(s string) int { n, _ := c.Count(s); return n }},
		{"split", Count},
		{"split-cold", Count},
	}
	for _, set := range benchSets() {
		for _, impl := range impls {
			b.Run(set.name+"/"+impl.name, func(b *testing.B) {
				msgs := set.msgs
				b.SetBytes(benchMsgLen)
				b.ReportAllocs()
				cpu := processCPU()
				i := 0
				for b.Loop() {
					if i%len(msgs) == 0 && impl.name == "split-cold" {
						shortTable.Store(nil)
					}
					impl.count(msgs[i%len(msgs)])
					i++
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
			if impl.name == "split-cold" {
				continue
			}
			b.Run(set.name+"/"+impl.name+"-parallel", func(b *testing.B) {
				msgs := set.msgs
				b.SetBytes(benchMsgLen)
				b.ReportAllocs()
				var seed sync.Mutex
				next := 0
				cpu := processCPU()
				defer func() {
					b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
				}()
				b.RunParallel(func(pb *testing.PB) {
					seed.Lock()
					i := next * 997
					next++
					seed.Unlock()
					for pb.Next() {
						impl.count(msgs[i%len(msgs)])
						i++
					}
				})
			})
		}
	}
}
