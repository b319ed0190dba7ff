package proxy

import (
	"bytes"
	"errors"
	"fmt"
)

// A scanner of JSON's structure, for the proxy's request bodies: it
// finds where values begin and end, jumping through strings with
// IndexByte, so a body of megabytes is crossed in a fraction of the
// time a full decoder takes. It checks the structure (brackets, colons,
// commas, closed strings, the literals and the characters of numbers),
// not what is inside strings (escapes, UTF-8), which is for whoever
// reads them.

// maxDepth bounds the nesting of a body.
const maxDepth = 512

var errEnd = errors.New("the JSON ends too soon")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace is the index of the first byte at or after i that is not
// white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// jsonScan scans one body; depth is the nesting it is at.
type jsonScan struct {
	b     []byte
	depth int
}

// skipString is the index past the string that starts at b[i] (a quote).
func (s *jsonScan) skipString(i int) (int, error) {
	b := s.b
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
func (s *jsonScan) skipScalar(i int) (int, error) {
	b := s.b
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ':' || isSpace(c) {
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

// skipValue is the index past the value that starts at b[i] (after any
// white space).
func (s *jsonScan) skipValue(i int) (int, error) {
	i = skipSpace(s.b, i)
	if i >= len(s.b) {
		return 0, errEnd
	}
	switch s.b[i] {
	case '"':
		return s.skipString(i)
	case '{', '[':
		return s.skipContainer(i)
	}
	return s.skipScalar(i)
}

// skipContainer is the index past the object or list at b[i], checking
// only that its brackets match and its strings close: what is inside is
// for whoever reads it.
func (s *jsonScan) skipContainer(i int) (int, error) {
	b := s.b
	var closers []byte
	for j := i; j < len(b); {
		switch c := b[j]; c {
		case '"':
			k, err := s.skipString(j)
			if err != nil {
				return 0, err
			}
			j = k
			continue
		case '{', '[':
			if s.depth+len(closers) >= maxDepth {
				return 0, fmt.Errorf("it nests deeper than %d", maxDepth)
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
	return 0, errEnd
}

// container reads the object or list at b[i], item reading one member
// or element from its index and returning the index past it. A
// container nested deeper than maxDepth is refused.
func (s *jsonScan) container(i int, open, close byte, item func(j int) (int, error)) (int, error) {
	b := s.b
	if i >= len(b) || b[i] != open {
		return 0, fmt.Errorf("%q expected at byte %d", open, i)
	}
	if s.depth++; s.depth > maxDepth {
		return 0, fmt.Errorf("it nests deeper than %d", maxDepth)
	}
	defer func() { s.depth-- }()
	j := skipSpace(b, i+1)
	if j < len(b) && b[j] == close {
		return j + 1, nil
	}
	for {
		if j >= len(b) {
			return 0, errEnd
		}
		end, err := item(j)
		if err != nil {
			return 0, err
		}
		j = skipSpace(b, end)
		if j >= len(b) {
			return 0, errEnd
		}
		switch b[j] {
		case ',':
			j = skipSpace(b, j+1)
		case close:
			return j + 1, nil
		default:
			return 0, fmt.Errorf("a comma or %q is missing at byte %d", close, j)
		}
	}
}
