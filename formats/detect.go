package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// DetectSize is how much of a file's start Detect wants to see.
const DetectSize = 64 << 10

// Detect tells a file's format from its first bytes (DetectSize is
// plenty): the keys of its first JSON object, and the record type where
// a format has one.
func Detect(head []byte) (Format, error) {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) == 0 {
		return "", fmt.Errorf("%w: the file is empty", ErrUnknownFormat)
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		return "", fmt.Errorf("%w: it is not JSON or JSONL (it starts with %q); the formats are %s", ErrUnknownFormat, preview(trimmed), formatList())
	}
	keys, typ := firstObject(trimmed)
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("weft"):
		return Weft, nil
	case has("mapping") || has("current_node"):
		return ChatGPT, nil
	case has("conversations"):
		return ShareGPT, nil
	case has("payload") && strings.Contains("session_meta response_item event_msg turn_context compacted", typ) && typ != "":
		return Codex, nil
	case has("uuid") || has("parentUuid") || has("sessionId") || has("snapshot") ||
		strings.Contains(" user assistant system summary file-history-snapshot progress queue-operation custom-title ", " "+typ+" ") && typ != "":
		return ClaudeCode, nil
	case has("messages"), has("role") && has("content"):
		return OpenAI, nil
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: no JSON object at its start; the formats are %s", ErrUnknownFormat, formatList())
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	return "", fmt.Errorf("%w: its first record has keys %s, which none of %s uses; give --format", ErrUnknownFormat, strings.Join(sorted(names), ", "), formatList())
}

// firstObject returns the top-level keys of the first JSON object in b
// (the first record of JSONL, or the first element of an array) and its
// "type" string, reading only as far as b goes.
func firstObject(b []byte) (map[string]bool, string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	keys := map[string]bool{}
	typ := ""
	depth, objDepth := 0, -1
	expectKey := false
	lastKey := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys, typ
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				depth++
				if t == '{' && objDepth < 0 {
					objDepth = depth
					expectKey = true
					continue
				}
			case '}', ']':
				if depth == objDepth {
					return keys, typ
				}
				depth--
			}
			if depth == objDepth {
				expectKey = true
			}
		case string:
			if depth == objDepth && expectKey {
				keys[t] = true
				lastKey = t
				expectKey = false
				continue
			}
			if depth == objDepth && lastKey == "type" {
				typ = t
			}
			if depth == objDepth {
				expectKey = true
			}
		default:
			if depth == objDepth {
				expectKey = true
			}
		}
	}
}

func preview(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return string(b)
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// describeJSON says what a JSON value is, for error messages: "an object
// with keys a, b", "a list", "a number".
func describeJSON(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		var keys map[string]json.RawMessage
		if json.Unmarshal(raw, &keys) != nil || len(keys) == 0 {
			return "an empty object"
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		names = sorted(names)
		if len(names) > 8 {
			names = append(names[:8], "…")
		}
		return "an object with keys " + strings.Join(names, ", ")
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}
