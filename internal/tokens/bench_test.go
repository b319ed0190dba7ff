//go:build unix

package tokens

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
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
// first sight of a piece, as an import of new text does; it counts those
// with the codec, as Count does until it builds the vocabulary index.
// "split-cold-index" is the same with the index built.
func BenchmarkCountTokens(b *testing.B) {
	c := codec()
	impls := []struct {
		name  string
		count func(string) int
	}{
		{"codec", func(s string) int { n, _ := c.Count(s); return n }},
		{"split", Count},
		{"split-cold", Count},
		{"split-cold-index", Count},
	}
	for _, set := range benchSets() {
		for _, impl := range impls {
			b.Run(set.name+"/"+impl.name, func(b *testing.B) {
				msgs := set.msgs
				cold := strings.HasPrefix(impl.name, "split-cold")
				if impl.name == "split-cold-index" {
					builtVocab.Store(loadVocab())
					defer builtVocab.Store(nil)
				}
				b.SetBytes(benchMsgLen)
				b.ReportAllocs()
				cpu := processCPU()
				i := 0
				for b.Loop() {
					if i%len(msgs) == 0 && cold {
						shortTable.Store(nil)
					}
					impl.count(msgs[i%len(msgs)])
					i++
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
			if strings.HasPrefix(impl.name, "split-cold") {
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

// BenchmarkCountLong counts one 8 MB message per op: the inputs that are
// one huge piece (a run of one letter, of "ab", of random lower-case
// letters, of random punctuation), a long run of digits and punctuation
// (pieces of a few bytes, most never seen before), and ordinary prose.
// Besides time and B/op it reports peak-MB, the most the live heap grew
// during an op, sampled every millisecond.
func BenchmarkCountLong(b *testing.B) {
	for _, in := range longInputs() {
		b.Run(in.name, func(b *testing.B) {
			s := in.gen(8 << 20)
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			peak := newHeapPeak()
			cpu := processCPU()
			for b.Loop() {
				Count(s)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(peak.stop())/(1<<20), "peak-MB")
		})
	}
}

// heapPeak samples the live heap until stopped.
type heapPeak struct {
	base uint64
	max  atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func newHeapPeak() *heapPeak {
	runtime.GC()
	p := &heapPeak{base: liveHeap(), done: make(chan struct{})}
	p.wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := liveHeap(); h > p.max.Load() {
				p.max.Store(h)
			}
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	})
	return p
}

// stop returns how far the live heap grew above where it was at the start.
func (p *heapPeak) stop() uint64 {
	close(p.done)
	p.wg.Wait()
	return max(p.max.Load(), p.base) - p.base
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
