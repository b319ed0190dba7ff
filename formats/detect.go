package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DetectSize is how much of a file's start Detect wants to see.
const DetectSize = 1 << 20

// DetectRecords is how many records at a file's start Detect looks at
// when the first does not tell the format; an importer skips as many
// leading records it cannot read before it gives up on a file.
const DetectRecords = 20

// Detect tells a file's format from its first bytes (DetectSize is
// plenty): the keys of its first JSON object, and the record type where
// a format has one. A first record that is cut off, broken or unknown
// does not decide: the next records (up to DetectRecords) are looked at,
// as the importers skip such a record too.
func Detect(head []byte) (Format, error) {
	head = bytes.TrimPrefix(head, []byte(BOM))
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) == 0 {
		return "", fmt.Errorf("%w: the file is empty", ErrUnknownFormat)
	}
	isJSON := trimmed[0] == '{' || trimmed[0] == '['
	var keys map[string]bool
	if isJSON {
		var typ string
		keys, typ = firstObject(trimmed)
		if f, ok := detectKeys(keys, typ); ok {
			return f, nil
		}
	}
	if f, ok := detectLater(trimmed); ok {
		return f, nil
	}
	if !isJSON {
		return "", fmt.Errorf("%w: it is not JSON or JSONL (it starts with %q); the formats are %s", ErrUnknownFormat, preview(trimmed), formatList())
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: no JSON object at its start; the formats are %s", ErrUnknownFormat, formatList())
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	return "", fmt.Errorf("%w: its first record has keys %s, which none of %s uses; give --format", ErrUnknownFormat, strings.Join(slices.Sorted(slices.Values(names)), ", "), formatList())
}

// detectKeys tells a format from a record's top-level keys and type.
func detectKeys(keys map[string]bool, typ string) (Format, bool) {
	has := func(k string) bool { return keys[k] }
	switch {
	case has("weft"):
		return Weft, true
	case has("mapping") || has("current_node"):
		return ChatGPT, true
	case has("conversations"):
		return ShareGPT, true
	case has("payload") && strings.Contains("session_meta response_item event_msg turn_context compacted", typ) && typ != "":
		return Codex, true
	case has("uuid") || has("parentUuid") || has("sessionId") || has("snapshot") ||
		strings.Contains(" user assistant system summary file-history-snapshot progress queue-operation custom-title ", " "+typ+" ") && typ != "":
		return ClaudeCode, true
	case has("messages"), has("role") && has("content"):
		return OpenAI, true
	}
	return "", false
}

// detectLater looks at the records after the first: the elements of a
// JSON array, else the lines that start with an object (a JSONL record
// starts a line; the objects nested in a pretty-printed document are
// indented). The first of them that tells a format decides.
func detectLater(b []byte) (Format, bool) {
	if b[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(b))
		if _, err := dec.Token(); err != nil {
			return "", false
		}
		for range DetectRecords {
			if !dec.More() {
				break
			}
			rest := bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n,")
			if len(rest) > 0 && rest[0] == '{' {
				if f, ok := detectKeys(firstObject(rest)); ok {
					return f, true
				}
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break // broken or cut off: nothing after it can be told apart
			}
		}
		return "", false
	}
	seen := 0
	for len(b) > 0 && seen < DetectRecords {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		seen++
		if line[0] == '{' {
			if f, ok := detectKeys(firstObject(line)); ok {
				return f, true
			}
		}
	}
	return "", false
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
