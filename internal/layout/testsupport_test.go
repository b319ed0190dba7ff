package layout

import (
	"path"
	"strconv"
	"strings"
	"testing"
)

// testSupport reports whether p is test support: a package named for it
// (opstest, viewtest), one whose non-test files import testing
// (benchdata), or any of e2e, which is tests through and through.
func testSupport(p *pkg) bool {
	if strings.HasSuffix(path.Base(p.path), "test") || under(p.path, "weft/e2e") {
		return true
	}
	for _, f := range p.files {
		for _, im := range f.Imports {
			if s, _ := strconv.Unquote(im.Path.Value); s == "testing" {
				return true
			}
		}
	}
	return false
}

// TestTestSupportStaysInTests: what the tests share (fixtures, checks,
// benchmark files) is imported by tests and by other test support only,
// never by the program.
func TestTestSupportStaysInTests(t *testing.T) {
	pkgs, _ := tree(t)
	for _, p := range sortedPkgs(pkgs) {
		if testSupport(p) {
			continue
		}
		for im := range p.imports {
			if q := pkgs[im]; q != nil && testSupport(q) {
				t.Errorf("%s imports the test support %s", p.path, im)
			}
		}
	}
}
