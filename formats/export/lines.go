package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// lines writes a JSON document whose array elements are encoded one
// at a time, one a line. A write to w that fails keeps its error for
// the Flush that end returns.
type lines struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

func newLines(w io.Writer) *lines {
	j := &lines{w: bufio.NewWriterSize(w, 1<<16)}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false)
	return j
}

// end closes the array and the document.
func (j *lines) end() error {
	if j.n > 0 {
		_, _ = j.w.WriteString("\n")
	}
	_, _ = j.w.WriteString("]}\n")
	return j.w.Flush()
}

// value encodes v without its newline.
func (j *lines) value(v any) error {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return err
	}
	_, err := j.w.Write(j.buf.Bytes()[:j.buf.Len()-1])
	return err
}

// elem writes v as the next element of the array.
func (j *lines) elem(v any) error {
	if j.n > 0 {
		_, _ = j.w.WriteString(",\n")
	} else {
		_, _ = j.w.WriteString("\n")
	}
	j.n++
	return j.value(v)
}
