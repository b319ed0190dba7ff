package mcpserver

import (
	"encoding/json"
	"fmt"
)

// A Messages API message may carry fields of its own besides role and
// content: Claude Code 2.1.330 sends its per-turn output_config (the
// effort it asks for) on the system turn that carries its environment.
// When weft writes the thread anew, such fields stay on the message
// that carries that content, found as cache breakpoints are (by role,
// and by what its first block says); a message an operation removed
// takes its fields with it.

// scanMessage is the index past the message at b[i], and whether it is
// an object with fields besides role and content.
func (s *jsonScan) scanMessage(i int) (int, bool, error) {
	if i >= len(s.b) || s.b[i] != '{' {
		end, err := s.skipValue(i)
		return end, false, err
	}
	own := false
	end, err := s.container(i, '{', '}', func(j int) (int, error) {
		k, v, err := s.member(j)
		if err != nil {
			return 0, err
		}
		if !own {
			name, err := keyName(s.b[j:k])
			if err != nil {
				return 0, err
			}
			own = name != "role" && name != "content"
		}
		return s.skipValue(v)
	})
	return end, own, err
}

// member reads the key of the object member at b[j] and its colon: it
// returns the index past the key and where the value starts.
func (s *jsonScan) member(j int) (int, int, error) {
	if s.b[j] != '"' {
		return 0, 0, fmt.Errorf("a key must be a string, at byte %d", j)
	}
	k, err := s.skipString(j)
	if err != nil {
		return 0, 0, err
	}
	c := skipSpace(s.b, k)
	if c >= len(s.b) || s.b[c] != ':' {
		return 0, 0, fmt.Errorf("a colon is missing at byte %d", c)
	}
	return k, skipSpace(s.b, c+1), nil
}

// ownFields reads a message with fields of its own: its role, what
// tells its content (the type and key of its first text, call or
// result; a string is a text), and its own members, as they came,
// joined by commas.
func ownFields(raw []byte) (role, typ, key string, fields []byte, ok bool) {
	s := &jsonScan{b: raw}
	var content []byte
	_, err := s.container(skipSpace(raw, 0), '{', '}', func(j int) (int, error) {
		k, v, err := s.member(j)
		if err != nil {
			return 0, err
		}
		end, err := s.skipValue(v)
		if err != nil {
			return 0, err
		}
		name, err := keyName(raw[j:k])
		if err != nil {
			return 0, err
		}
		switch name {
		case "role":
			json.Unmarshal(raw[v:end], &role)
		case "content":
			content = raw[v:end]
		default:
			if len(fields) > 0 {
				fields = append(fields, ',')
			}
			fields = append(fields, raw[j:end]...)
		}
		return end, nil
	})
	if err != nil || len(fields) == 0 || len(content) == 0 {
		return "", "", "", nil, false
	}
	if content[0] == '"' {
		if json.Unmarshal(content, &key) != nil {
			return "", "", "", nil, false
		}
		return role, "text", key, fields, true
	}
	var blocks []blockRef
	if json.Unmarshal(content, &blocks) != nil {
		return "", "", "", nil, false
	}
	for _, b := range blocks {
		if key, ok := b.key(); ok {
			return role, b.Type, key, fields, true
		}
	}
	return "", "", "", nil, false
}
