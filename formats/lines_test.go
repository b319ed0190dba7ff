package formats_test

import (
	"strings"
	"testing"

	"weft/formats"
)

func TestEachLine(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	in := "a\r\n\n  \nb\n" + long + "\nc"
	var got []string
	var nums []int
	err := formats.EachLine(strings.NewReader(in), func(n int, line []byte) error {
		got = append(got, string(line[:min(len(line), 3)]))
		nums = append(nums, n)
		return nil
	}, func(n int) { t.Errorf("line %d reported too long", n) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "a,b,xxx,c" || nums[3] != 6 || nums[2] != 5 {
		t.Fatalf("lines %v at %v", got, nums)
	}
}
