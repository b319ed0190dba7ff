package raw

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/themes"
)

func TestOverlappingExtentsTakeLanesOfTheirOwn(t *testing.T) {
	ids := func(seqs ...uint64) []model.ItemID {
		var out []model.ItemID
		for _, s := range seqs {
			out = append(out, model.MessageID(s))
		}
		return out
	}
	ops := []model.Op{
		{ID: "a", Type: model.OpDigest, Targets: ids(2, 3, 4), Active: true, Author: "claude"},
		{ID: "b", Type: model.OpTag, Targets: ids(3, 5), Active: false, Author: "operator"},
		{ID: "c", Type: model.OpSnip, Targets: ids(7), Active: true, Author: "operator"},
	}
	eff := &model.View{Status: map[string]model.OpStatus{"a": model.StatusActive, "b": model.StatusInactive, "c": model.StatusActive}}
	x := Find(ops, eff)
	if len(x) != 3 || x[0].Lane == x[1].Lane || x[2].Lane != 0 || !x[1].Inactive || x[0].Inactive {
		t.Fatalf("extents %+v", x)
	}
	st := themes.New(themes.Default(true), true)
	if g := ansi.Strip(x.Gutter(2, 0, false, st)); g != "┌   " {
		t.Errorf("the digest's first line: %q", g)
	}
	if g := ansi.Strip(x.Gutter(3, 0, true, st)); g != "│┌  " {
		t.Errorf("where the tag starts inside the digest: %q", g)
	}
	if g := ansi.Strip(x.Gutter(7, 0, true, st)); g != "╶   " {
		t.Errorf("a one-message snip: %q", g)
	}
	if l := ansi.Strip(x.Labels(3, st)); !strings.Contains(l, "tag by operator (off)") {
		t.Errorf("the labels at 3: %q", l)
	}
}
