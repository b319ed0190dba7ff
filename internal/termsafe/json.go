package termsafe

import "bytes"

// JSON returns a JSON text with DEL and the C1 controls inside its
// strings written as \u escapes: the same JSON to any reader, and safe
// on a terminal (encoding/json escapes the C0 controls itself, but
// passes DEL and U+0080…U+009F through, and some terminals act on C1
// controls). These bytes can only occur inside strings of valid JSON, so
// no parsing is needed; b is returned as it is when it has none.
func JSON(b []byte) []byte {
	if !hasJSONControl(b) {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == 0x7f:
			out = append(out, `\u007f`...)
		case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] < 0xa0:
			out = append(out, `\u00`...)
			out = append(out, hex[b[i+1]>>4], hex[b[i+1]&0xf])
			i++
		default:
			out = append(out, c)
		}
	}
	return out
}

const hex = "0123456789abcdef"

func hasJSONControl(b []byte) bool {
	if bytes.IndexByte(b, 0x7f) >= 0 {
		return true
	}
	for i := bytes.IndexByte(b, 0xc2); i >= 0 && i+1 < len(b); {
		if c := b[i+1]; c >= 0x80 && c < 0xa0 {
			return true
		}
		j := bytes.IndexByte(b[i+1:], 0xc2)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
