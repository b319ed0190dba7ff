package formats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one JSONL record; a longer line is reported as a
// problem and skipped, never read whole into memory.
const MaxLine = 64 << 20

// BOM is the UTF-8 byte order mark some files start with.
const BOM = "\xef\xbb\xbf"

// EachLine calls fn with every non-blank line of r (without its line
// ending) and its 1-based number. Lines may be any length up to MaxLine;
// longer ones are reported through tooLong and skipped. The slice passed
// to fn is only valid during the call.
func EachLine(r io.Reader, fn func(n int, line []byte) error, tooLong func(n int)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	n := 0
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !skipping {
				long = append(long, chunk...)
				if len(long) > MaxLine {
					skipping, long = true, nil
				}
			}
			continue
		}
		if len(chunk) > 0 || long != nil || skipping {
			n++
			line := chunk
			if long != nil {
				line = append(long, chunk...)
				long = nil
			}
			if skipping {
				skipping = false
				tooLong(n)
			} else if line = bytes.TrimSpace(line); len(line) > 0 {
				if ferr := fn(n, line); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading line %d: %w", n+1, err)
		}
	}
}

// FirstByte skips a byte order mark and white space, and returns the
// first byte after them without consuming it: how a reader of JSON
// documents tells an array from objects.
func FirstByte(br *bufio.Reader) (byte, error) {
	if bom, _ := br.Peek(len(BOM)); string(bom) == BOM {
		_, _ = br.Discard(len(BOM))
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		_ = br.UnreadByte()
		return c, nil
	}
}
