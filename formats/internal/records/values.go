// Package records is what the readers of training-set files (openai,
// sharegpt) share: reading a file's top-level values whatever its shape
// (a JSON array, JSON lines, documents one after another), emitting a
// thread whose keys come from its content, linking tool results to
// their calls, and the media placeholders of LLaMA-Factory records.
package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"weft/formats"
)

// Shape is how a file holds its values.
type Shape uint8

// The shapes of a file.
const (
	// Array is a JSON array: the values are its elements.
	Array Shape = iota + 1
	// Lines is JSON lines: a value a line.
	Lines
	// Document is JSON values one after another, not by line.
	Document
)

// Value is one top-level value of a file: an element of the array, a
// line, or a document.
type Value struct {
	// Raw is the value, valid during the callback only.
	Raw []byte
	// Line is the JSONL line, 0 for the other shapes.
	Line int
	// Index is the value's 1-based place among the file's values.
	Index int
	// Shape is the file's.
	Shape Shape
}

// where says where a problem is, for a Problem's Err (the line of a
// JSONL value is its Line instead).
func (v *Value) where() string {
	if v.Line > 0 {
		return ""
	}
	return "record " + strconv.Itoa(v.Index) + ": "
}

// Problem adds a problem with the value.
func (v *Value) Problem(p *formats.Problems, msg string) {
	p.Add(v.Line, v.where()+msg)
}

// Note adds a remark on the value where nothing was lost.
func (v *Value) Note(p *formats.Problems, msg string) {
	p.Note(v.Line, v.where()+msg)
}

// Skipped reports a message of the value that is not imported, where
// says which ("message 3: ", or "" for the value itself): a note when
// nothing was lost (reason Empty), else a problem.
func (v *Value) Skipped(p *formats.Problems, where, reason string) {
	if reason == Empty {
		v.Note(p, where+reason+"; skipped")
		return
	}
	v.Problem(p, where+reason+"; skipped")
}

// Object is the value when it is a JSON object; any other value is
// reported ("a number, not a record; skipped") and gives nil.
func (v *Value) Object(p *formats.Problems, what string) []byte {
	raw := v.Raw
	if len(raw) > 0 && raw[0] == '{' {
		return raw
	}
	if json.Valid(raw) {
		v.Problem(p, formats.DescribeJSON(raw)+", not "+what+"; skipped")
	} else {
		v.Problem(p, "not valid JSON; skipped")
	}
	return nil
}

// List reads the value's list under key (raw, as decoded): a list that
// is not one, or is empty, is reported and gives nil.
func (v *Value) List(p *formats.Problems, key string, raw json.RawMessage) []json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' {
		v.Problem(p, "its "+strconv.Quote(key)+" is "+formats.DescribeJSON(raw)+", not a list; skipped")
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		v.Problem(p, "its "+strconv.Quote(key)+": "+formats.DescribeError(err)+"; skipped")
		return nil
	}
	if len(list) == 0 {
		v.Note(p, "its "+strconv.Quote(key)+" list is empty; skipped")
	}
	return list
}

// EachObject calls fn with the elements of a list that are objects,
// numbered from 1, and where, which starts a problem with the element
// ("turn 3: "); an element of another kind is reported ("turn 3: a
// number, not a turn; skipped"). An error from fn stops it.
func (v *Value) EachObject(p *formats.Problems, list []json.RawMessage, what string, fn func(k int, where string, raw []byte) error) error {
	for i, raw := range list {
		where := what + " " + strconv.Itoa(i+1) + ": "
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			v.Problem(p, where+formats.DescribeJSON(raw)+", not a "+what+"; skipped")
			continue
		}
		if err := fn(i+1, where, raw); err != nil {
			return err
		}
	}
	return nil
}

// ErrEmpty is the error of a file with nothing in it.
var ErrEmpty = errors.New("empty file")

// NotJSONError is the error of a file that does not start like JSON.
type NotJSONError struct{ Head string }

// Error says what the file starts with.
func (e *NotJSONError) Error() string {
	return fmt.Sprintf("it is not JSON (it starts with %q)", e.Head)
}

// Each calls fn with each top-level value of r. Bad JSON in an array or
// document ends the reading there (a Problem); a bad line of JSON lines
// is given to fn like any other (its JSON is checked there). An error
// from fn stops the reading and is returned.
//
// A file starting with '{' is JSON lines when its first line is a whole
// JSON value (or, when it is not, when the next line starts a JSON value
// of its own: a first line that is broken), else one JSON document.
func Each(r io.Reader, probs *formats.Problems, fn func(v *Value) error) (Shape, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := formats.FirstByte(br)
	if err == io.EOF {
		return 0, ErrEmpty
	}
	if err != nil {
		return 0, err
	}
	switch first {
	case '[':
		return Array, readArray(json.NewDecoder(br), probs, fn)
	case '{':
	default:
		head, _ := br.Peek(24)
		return 0, &NotJSONError{preview(head)}
	}
	// JSON lines, or one document spread over lines?
	prefix, lines, err := peekLines(br)
	if err != nil {
		return 0, err
	}
	rest := io.MultiReader(bytes.NewReader(prefix), br)
	if !lines {
		return Document, readDocument(json.NewDecoder(rest), probs, fn)
	}
	v := Value{Shape: Lines}
	err = formats.EachLine(rest, func(n int, line []byte) error {
		v.Index++
		v.Line, v.Raw = n, line
		return fn(&v)
	}, func(n int) {
		v.Index++
		probs.Add(n, "line longer than 64 MB; skipped")
	})
	return Lines, err
}

func preview(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 16 {
		b = b[:16]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return string(b)
}

// readLine reads one line (with its '\n'), keeping at most MaxLine
// bytes of it; long reports a longer one (the rest stays in br).
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > formats.MaxLine {
				return line, true, nil
			}
			continue
		}
		return line, false, err
	}
}

// peekLines reads the first line of a file starting with '{' (and, when
// that line is not JSON by itself, the next non-blank one) to tell JSON
// lines from a document spread over lines. It returns what it read, to
// be read again.
func peekLines(br *bufio.Reader) (prefix []byte, lines bool, err error) {
	line, long, err := readLine(br)
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	prefix = line
	if long || json.Valid(bytes.TrimSpace(line)) {
		return prefix, true, nil
	}
	if err == io.EOF {
		return prefix, false, nil
	}
	for {
		line, long, err := readLine(br)
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		prefix = append(prefix, line...)
		t := bytes.TrimSpace(line)
		if len(t) > 0 {
			// A first line that is broken, then a record of its own.
			return prefix, !long && (t[0] == '{' || t[0] == '[') && json.Valid(t), nil
		}
		if err == io.EOF {
			return prefix, false, nil
		}
	}
}

// decodeErr tells broken JSON (a Problem: the rest is not read) from a
// failing reader (an error).
func decodeErr(err error) (string, error) {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the file ends inside it (is it cut off?)", nil
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (byte %d of the file): %s", syn.Offset, formats.ShortError(err)), nil
	}
	return "", err
}

// broken reports the record whose broken JSON ends the reading, or
// returns the reader's error.
func broken(err error, probs *formats.Problems, index int) error {
	msg, err := decodeErr(err)
	if err != nil {
		return err
	}
	probs.Add(0, fmt.Sprintf("record %d: %s; the rest of the file is not read", index, msg))
	return nil
}

func readArray(dec *json.Decoder, probs *formats.Problems, fn func(v *Value) error) error {
	if _, err := dec.Token(); err != nil { // '['
		return err
	}
	v := Value{Shape: Array}
	var raw json.RawMessage
	for dec.More() {
		v.Index++
		raw = raw[:0]
		if err := dec.Decode(&raw); err != nil {
			return broken(err, probs, v.Index)
		}
		v.Raw = raw
		if err := fn(&v); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		msg, err := decodeErr(err)
		if err != nil {
			return err
		}
		probs.Add(0, fmt.Sprintf("after record %d: %s", v.Index, msg))
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		probs.Add(0, "data after the end of the JSON array is ignored")
	}
	return nil
}

func readDocument(dec *json.Decoder, probs *formats.Problems, fn func(v *Value) error) error {
	v := Value{Shape: Document}
	var raw json.RawMessage
	for {
		raw = raw[:0]
		err := dec.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		v.Index++
		if err != nil {
			return broken(err, probs, v.Index)
		}
		v.Raw = raw
		if err := fn(&v); err != nil {
			return err
		}
	}
}
