package english

import "testing"

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345",
		165521: "165,521", 1000000: "1,000,000", -1: "-1", -1234: "-1,234", -123456: "-123,456",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n         int
		one, want string
	}{
		{0, "message", "0 messages"},
		{1, "message", "1 message"},
		{1500, "message", "1,500 messages"},
		{2, "match", "2 matches"},
		{3, "entry", "3 entries"},
		{4, "key", "4 keys"},
		{5, "box", "5 boxes"},
		{6, "status", "6 statuses"},
		{1, "entry", "1 entry"},
	} {
		if got := Count(c.n, c.one); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.one, got, c.want)
		}
	}
}
