package export

import sjson "github.com/segmentio/encoding/json"

// AppendJSON appends v encoded as encoding/json encodes it with HTML
// left unescaped, raw JSON values in it trusted as valid: the encoding
// of the bodies weft sends a provider (a thread may be megabytes, and
// this encoder is a few times faster).
func AppendJSON(dst []byte, v any) ([]byte, error) {
	return sjson.Append(dst, v, sjson.TrustRawMessage)
}
