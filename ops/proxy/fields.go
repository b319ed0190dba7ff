package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"weft/formats"
	"weft/internal/jsonscan"
)

// A message may carry fields of its own besides those weft writes for
// it: Claude Code 2.1.330 sends its per-turn output_config (the effort it
// asks for) on the system turn that carries its environment; a Chat
// Completions client sends a DeepSeek-style assistant's
// reasoning_content, a message's cache_control, a vendor's own fields.
// When weft writes the thread anew, such fields stay on the message that
// carries that content, found as cache breakpoints are (by role, and by
// what it says: its first text, call or result); a message an operation
// removed takes its fields with it.

// scanMessage is the index past the message at b[i], and whether it is
// an object with fields besides those weft writes for a message of api.
func scanMessage(s *jsonscan.Scanner, i int, api API) (int, bool, error) {
	if i >= len(s.B) || s.B[i] != '{' {
		end, err := s.SkipValue(i)
		return end, false, err
	}
	own := false
	end, err := s.Container(i, '{', '}', func(j int) (int, error) {
		k, v, err := member(s, j)
		if err != nil {
			return 0, err
		}
		if !own {
			w, err := written(api, s.B[j:k])
			if err != nil {
				return 0, err
			}
			own = !w
		}
		return s.SkipValue(v)
	})
	return end, own, err
}

// written reports whether weft writes the member whose key (quoted, as
// it came) is key itself, for a message of api: the exporters' members.
// A Chat Completions message's legacy function_call is read as a tool
// call, and written as one.
func written(api API, key []byte) (bool, error) {
	name := key[1 : len(key)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		n, err := keyName(key)
		if err != nil {
			return false, err
		}
		name = []byte(n)
	}
	switch string(name) {
	case "role", "content":
		return true, nil
	case "name", "tool_calls", "tool_call_id", "function_call":
		return api == OpenAI, nil
	}
	return false, nil
}

// member reads the key of the object member at b[j] and its colon: it
// returns the index past the key and where the value starts.
func member(s *jsonscan.Scanner, j int) (int, int, error) {
	if s.B[j] != '"' {
		return 0, 0, fmt.Errorf("a key must be a string, at byte %d", j)
	}
	k, err := s.SkipString(j)
	if err != nil {
		return 0, 0, err
	}
	c := jsonscan.SkipSpace(s.B, k)
	if c >= len(s.B) || s.B[c] != ':' {
		return 0, 0, fmt.Errorf("a colon is missing at byte %d", c)
	}
	return k, jsonscan.SkipSpace(s.B, c+1), nil
}

// ownMsg is a request's message with fields of its own: its role, what
// tells what it says (the type and key of its first text, call or
// result: see blockRef), and its own members, as they came, joined by
// commas.
type ownMsg struct {
	role, typ, key string
	fields         []byte
}

// ownFields reads a message of api with fields of its own; false for a
// message whose fields cannot be placed (it says nothing weft can find
// again).
func ownFields(api API, raw []byte) (ownMsg, bool) {
	var o ownMsg
	var c said
	s := &jsonscan.Scanner{B: raw}
	_, err := s.Container(jsonscan.SkipSpace(raw, 0), '{', '}', func(j int) (int, error) {
		k, v, err := member(s, j)
		if err != nil {
			return 0, err
		}
		end, err := s.SkipValue(v)
		if err != nil {
			return 0, err
		}
		w, err := written(api, raw[j:k])
		if err != nil {
			return 0, err
		}
		if !w {
			if len(o.fields) > 0 {
				o.fields = append(o.fields, ',')
			}
			o.fields = append(o.fields, raw[j:end]...)
		}
		name, _ := keyName(raw[j:k])
		switch name {
		case "role":
			o.role, _ = formats.DecodeString(raw[v:end])
		case "content":
			c.content = raw[v:end]
		case "tool_calls":
			c.calls = raw[v:end]
		case "tool_call_id":
			c.callID, _ = formats.DecodeString(raw[v:end])
		case "refusal":
			c.refusal, _ = formats.DecodeString(raw[v:end])
		}
		return end, nil
	})
	if err != nil || len(o.fields) == 0 {
		return ownMsg{}, false
	}
	var ok bool
	if api == OpenAI {
		o.role = chatRole(o.role)
		o.typ, o.key, ok = c.says(o.role)
	} else {
		o.typ, o.key, ok = anSays(c.content)
	}
	return o, ok
}

// anSays is what a Messages API message's content says first: a string
// is a text.
func anSays(content []byte) (typ, key string, ok bool) {
	if len(content) == 0 {
		return "", "", false
	}
	if content[0] == '"' {
		key, ok := formats.DecodeString(content)
		return "text", key, ok
	}
	var blocks []blockRef
	if json.Unmarshal(content, &blocks) != nil {
		return "", "", false
	}
	for _, b := range blocks {
		if key, ok := b.key(); ok {
			return b.Type, key, true
		}
	}
	return "", "", false
}

// placeFields places the own fields of the request's messages (b.own)
// on the thread sent, of n messages: each goes to the latest message
// of its role (role) that says what its own said (says) and has none
// yet, the latest request's message first. A message an operation
// removed takes its fields with it. Nil when none is placed.
func (b *proxyBody) placeFields(n int, role func(m int) string, says func(m int, o *ownMsg) bool, skip func(raw int) bool) map[int][]byte {
	var placed map[int][]byte
	// The thread's messages of each role looked for, latest first, from
	// the latest without fields: where the thread kept the request's
	// messages, each finds its own at the head of its role's, and a
	// thread of thousands is placed in one pass.
	var byRole map[string][]int
	for k := len(b.own) - 1; k >= 0; k-- {
		if skip(b.own[k]) {
			continue // it goes as it came, with them
		}
		o, ok := ownFields(b.api, b.messages[b.own[k]])
		if !ok {
			continue
		}
		list, listed := byRole[o.role]
		if !listed {
			for m := n - 1; m >= 0; m-- {
				if role(m) == o.role {
					list = append(list, m)
				}
			}
			if byRole == nil {
				byRole = map[string][]int{}
			}
		}
		for len(list) > 0 && placed[list[0]] != nil {
			list = list[1:]
		}
		byRole[o.role] = list
		for _, m := range list {
			if placed[m] == nil && says(m, &o) {
				if placed == nil {
					placed = map[int][]byte{}
				}
				placed[m] = o.fields
				break
			}
		}
	}
	return placed
}

// appendFields puts fields, members joined by commas, at the end of the
// object that ends out.
func appendFields(out, fields []byte) []byte {
	if fields == nil {
		return out
	}
	return append(append(append(out[:len(out)-1], ','), fields...), '}')
}
