//go:build !amd64

package fuzzy

// pairSIMD is false where there is no vector pair scan: scans use
// bytes.Index.
var pairSIMD = false

// pairMask is never called without pairSIMD.
func pairMask(s []byte, d int, a, b byte) (int, uint32) {
	panic("fuzzy: pairMask without SIMD")
}
