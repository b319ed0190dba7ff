package fuzzy

import "golang.org/x/sys/cpu"

// pairSIMD reports whether pairMask runs as AVX2; tests turn it off to
// check the portable scan on the same machine.
var pairSIMD = cpu.X86.HasAVX2

// pairMask looks at the places i of s, 32 at a time from 0, for s[i] == a
// and s[i+d] == b, in whole blocks of places with room for both (i+d <
// len(s)). It returns the first block's offset whose mask (bit j for
// place off+j) is not zero, or, with a zero mask, where the whole blocks
// ended (the caller checks the rest).
func pairMask(s []byte, d int, a, b byte) (off int, mask uint32) {
	n := len(s) - d // places with s[i+d] in s
	if n < 32 {
		return 0, 0
	}
	return pairMaskAVX2(&s[0], n, d, a, b)
}

// pairMaskAVX2 is pairMask's loop over n places (n >= 32, and s[n-1+d]
// readable) in AVX2.
//
//go:noescape
func pairMaskAVX2(s *byte, n, d int, a, b byte) (off int, mask uint32)
