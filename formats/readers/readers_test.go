package readers

import (
	"testing"

	"weft/formats"
)

// Every importable format has an importer, and nothing else does.
func TestForEveryFormat(t *testing.T) {
	for _, f := range formats.Formats {
		if r, ok := For(f); !ok || r == nil {
			t.Errorf("no importer for %s", f)
		}
	}
	if _, ok := For("nosuch"); ok {
		t.Errorf("an importer for an unknown format")
	}
	if len(readers) != len(formats.Formats) {
		t.Errorf("%d importers for %d formats", len(readers), len(formats.Formats))
	}
}
