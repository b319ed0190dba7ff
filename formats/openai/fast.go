package openai

import (
	"weft/formats"
	"weft/model"
)

// fastMessage reads the common line of a big file of messages, a flat
// object {"role", "content", "name"} of strings with a role that needs
// no parts (system, developer, user, assistant), without decoding it
// into a struct: several times faster, which the import of a file of a
// million messages shows (BenchmarkReadOpenAIJSONL here,
// BenchmarkImportOpenAIJSONL1M in ops). Its strings are read by
// formats.ScanString. ok is false for anything else, which then goes the
// general way (and gets the same result, or its error).
func fastMessage(b []byte) (nm model.NewMessage, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nm, false
	}
	var role, content, name string
	var hasRole, hasContent bool
	for {
		i = skipSpace(b, i+1)
		// the key: plain ASCII, matched exactly (encoding/json matches
		// keys without regard to case: those go the general way)
		if i >= len(b) || b[i] != '"' {
			return nm, false
		}
		ks := i + 1
		j := ks
		for j < len(b) && b[j] != '"' && b[j] >= 0x20 && b[j] < 0x80 && b[j] != '\\' {
			j++
		}
		if j >= len(b) || b[j] != '"' {
			return nm, false
		}
		key := b[ks:j]
		i = skipSpace(b, j+1)
		if i >= len(b) || b[i] != ':' {
			return nm, false
		}
		i = skipSpace(b, i+1)
		val, next, vok := formats.ScanString(b, i)
		if !vok {
			return nm, false
		}
		switch string(key) {
		case "role":
			role, hasRole = val, true
		case "content":
			content, hasContent = val, true
		case "name":
			name = val
		default:
			return nm, false
		}
		i = skipSpace(b, next)
		if i >= len(b) {
			return nm, false
		}
		if b[i] == ',' {
			continue
		}
		if b[i] != '}' {
			return nm, false
		}
		if skipSpace(b, i+1) != len(b) || !hasRole || !hasContent {
			return nm, false
		}
		break
	}
	r, source := mapRole(role)
	if r == "" || r == model.RoleTool {
		return nm, false
	}
	nm = model.NewMessage{Role: r, Content: content, Name: name}
	if source != "" {
		nm.Meta = map[string]string{"source_role": source}
	}
	return nm, true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
