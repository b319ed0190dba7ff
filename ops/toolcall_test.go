package ops

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"weft/internal/jsonargs"
)

// The tool registry lives above ops (ops/tools), which the tests inside
// this package (fixture_test.go's) cannot import. They reach the service
// as the faces do all the same: by a tool's name, with JSON arguments
// decoded as the registry decodes them (internal/jsonargs), into the
// Service method the tool is bound to. ops/tools tests that each tool is
// bound to the method named here (toolMethod).

// toolMethod is the Service method a tool is bound to: snip_messages is
// SnipMessages.
func toolMethod(s *Service, name string) (reflect.Value, bool) {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	m := reflect.ValueOf(s).MethodByName(b.String())
	if !m.IsValid() || m.Type().NumIn() != 2 || m.Type().NumOut() != 2 {
		return reflect.Value{}, false
	}
	return m, true
}

// callTool runs the tool name on s with JSON arguments; a refusal of the
// arguments is ErrInvalid, as the registry makes it.
func callTool(ctx context.Context, s *Service, name string, raw json.RawMessage) (any, error) {
	m, ok := toolMethod(s, name)
	if !ok {
		return nil, errors.New("no tool " + name)
	}
	args, err := jsonargs.Decode(name, m.Type().In(1), raw)
	if err != nil {
		return nil, Invalidf("%s", err)
	}
	out := m.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(args).Elem()})
	err, _ = out[1].Interface().(error)
	return out[0].Interface(), err
}
