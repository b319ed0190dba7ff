// Package english writes counts as weft's messages show them to people:
// thousands separated, nouns in the plural they take.
package english

import (
	"strconv"
	"strings"
)

// Thousands writes n with commas between thousands: 165,521.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Count is n (thousands separated) and the noun one in the number n
// takes: "1 message", "1,500 messages", "2 matches", "3 entries".
func Count(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + Plural(one)
}

// Plural is a regular English noun's plural: matches, entries, keys.
func Plural(one string) string {
	switch {
	case strings.HasSuffix(one, "s"), strings.HasSuffix(one, "x"),
		strings.HasSuffix(one, "ch"), strings.HasSuffix(one, "sh"):
		return one + "es"
	case len(one) > 1 && one[len(one)-1] == 'y' && !strings.ContainsRune("aeiou", rune(one[len(one)-2])):
		return one[:len(one)-1] + "ies"
	}
	return one + "s"
}
