package rows

import (
	"testing"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\nsecond line", "plain text\nsecond line"},
		{"\x1b[31mred\x1b[0m and \x1b[2Jclear", "␛[31mred␛[0m and ␛[2Jclear"},
		{"a\tb", "a    b"},
		{"windows\r\nline", "windows\nline"},
		{"bell\x07 and nul\x00", "bell␇ and nul␀"},
		{"csi\u009b2J", `csi\u009b2J`},
		{"héllo → wörld 🙂", "héllo → wörld 🙂"},
	}
	for _, c := range cases {
		if got := sanitize(c.in); got != c.want {
			t.Errorf("sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
