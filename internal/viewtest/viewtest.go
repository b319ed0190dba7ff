// Package viewtest writes views compactly for tests to compare: stored
// messages by ID, synthetic items as <op>/<k>, markers as [type:op], tags
// as {a,b}.
package viewtest

import (
	"fmt"
	"strings"

	"weft/model"
)

// Render writes a view on one line: "m1 [digest:op1] op1/0{t} m5".
func Render(v *model.View) string {
	var b strings.Builder
	mi := 0
	for i, it := range v.Items {
		for mi < len(v.Markers) && v.Markers[mi].At == i {
			fmt.Fprintf(&b, "[%s:%s] ", v.Markers[mi].OpType, v.Markers[mi].OpID)
			mi++
		}
		b.WriteString(string(v.ID(it)))
		if tags := v.Tags(it); len(tags) > 0 {
			fmt.Fprintf(&b, "{%s}", strings.Join(tags, ","))
		}
		b.WriteByte(' ')
	}
	for ; mi < len(v.Markers); mi++ {
		fmt.Fprintf(&b, "[%s:%s] ", v.Markers[mi].OpType, v.Markers[mi].OpID)
	}
	return strings.TrimSpace(b.String())
}
