// Package jsonscan scans JSON's structure: it finds where values begin
// and end, jumping through strings with IndexByte, so a body of
// megabytes is crossed in a fraction of the time a full decoder takes.
// It checks the structure (brackets, colons, commas, closed strings,
// the literals and the characters of numbers), not what is inside
// strings (escapes, UTF-8), which is for whoever reads them.
package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
)

// MaxDepth bounds the nesting of a body.
const MaxDepth = 512

// ErrEnd is JSON that ends too soon.
var ErrEnd = errors.New("the JSON ends too soon")

// IsSpace reports whether c is JSON's white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace is the index of the first byte at or after i that is not
// white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// Scanner scans one body, B; depth is the nesting it is at.
type Scanner struct {
	B     []byte
	depth int
}

// SkipString is the index past the string that starts at b[i] (a quote).
func (s *Scanner) SkipString(i int) (int, error) {
	b := s.B
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, fmt.Errorf("a string at byte %d is not closed", i)
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipScalar is the index past the number or literal at b[i].
func (s *Scanner) skipScalar(i int) (int, error) {
	b := s.B
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ':' || IsSpace(c) {
			break
		}
		j++
	}
	switch tok := b[i:j]; {
	case len(tok) == 0:
		return 0, fmt.Errorf("a value is missing at byte %d", i)
	case string(tok) == "true" || string(tok) == "false" || string(tok) == "null":
	case tok[0] == '-' || tok[0] >= '0' && tok[0] <= '9':
		for _, c := range tok {
			if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
				return 0, fmt.Errorf("%q at byte %d is not a number", tok, i)
			}
		}
	default:
		return 0, fmt.Errorf("unexpected %q at byte %d", firstRune(tok), i)
	}
	return j, nil
}

func firstRune(b []byte) string {
	for i := range string(b) {
		if i > 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// SkipValue is the index past the value that starts at b[i] (after any
// white space).
func (s *Scanner) SkipValue(i int) (int, error) {
	i = SkipSpace(s.B, i)
	if i >= len(s.B) {
		return 0, ErrEnd
	}
	switch s.B[i] {
	case '"':
		return s.SkipString(i)
	case '{', '[':
		return s.skipContainer(i)
	}
	return s.skipScalar(i)
}

// skipContainer is the index past the object or list at b[i], checking
// only that its brackets match and its strings close: what is inside is
// for whoever reads it.
func (s *Scanner) skipContainer(i int) (int, error) {
	b := s.B
	var closers []byte
	for j := i; j < len(b); {
		switch c := b[j]; c {
		case '"':
			k, err := s.SkipString(j)
			if err != nil {
				return 0, err
			}
			j = k
			continue
		case '{', '[':
			if s.depth+len(closers) >= MaxDepth {
				return 0, fmt.Errorf("it nests deeper than %d", MaxDepth)
			}
			closers = append(closers, c+2) // '}' and ']' follow their openers by 2
		case '}', ']':
			if len(closers) == 0 || closers[len(closers)-1] != c {
				return 0, fmt.Errorf("unexpected %q at byte %d", c, j)
			}
			if closers = closers[:len(closers)-1]; len(closers) == 0 {
				return j + 1, nil
			}
		}
		j++
	}
	return 0, ErrEnd
}

// Container reads the object or list at b[i], item reading one member
// or element from its index and returning the index past it. A
// Container nested deeper than MaxDepth is refused.
func (s *Scanner) Container(i int, open, close byte, item func(j int) (int, error)) (int, error) {
	b := s.B
	if i >= len(b) || b[i] != open {
		return 0, fmt.Errorf("%q expected at byte %d", open, i)
	}
	if s.depth++; s.depth > MaxDepth {
		return 0, fmt.Errorf("it nests deeper than %d", MaxDepth)
	}
	defer func() { s.depth-- }()
	j := SkipSpace(b, i+1)
	if j < len(b) && b[j] == close {
		return j + 1, nil
	}
	for {
		if j >= len(b) {
			return 0, ErrEnd
		}
		end, err := item(j)
		if err != nil {
			return 0, err
		}
		j = SkipSpace(b, end)
		if j >= len(b) {
			return 0, ErrEnd
		}
		switch b[j] {
		case ',':
			j = SkipSpace(b, j+1)
		case close:
			return j + 1, nil
		default:
			return 0, fmt.Errorf("a comma or %q is missing at byte %d", close, j)
		}
	}
}
