package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"weft/model"
	"weft/ops/tools"
)

// Tools' schemas are generated from their Go types, then made to say what
// the handlers take, in this one place:
//
//   - a required argument is not nullable: the generator gives pointers
//     and slices the type ["null", T], and a required argument is to be
//     given (an empty list says "none" where one may be empty);
//   - a string argument that takes one of a fixed set (a format, a view,
//     a mode, a source) lists the set as its enum, from the very list its
//     handler checks (tools.Tool.ArgChoices);
//   - a message's role is one of model.Roles.

// schemaOptions describe weft's types to the schema generator: parts are
// kept verbatim, so they are any JSON value, not a list of bytes. The
// schema is an object with a description rather than the bare `true` an
// empty one becomes, which clients mapping schemas onto narrower dialects
// refuse (the inspector's --strict does).
var schemaOptions = &jsonschema.ForOptions{
	TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Description: "any JSON value, kept verbatim"},
		reflect.TypeFor[any]():             {Description: "any JSON value"},
		reflect.TypeFor[model.Role]():      {Type: "string", Enum: enumOf(model.Roles)},
	},
}

// enumOf is a list of string values as a schema's enum holds them.
func enumOf[S ~string](values []S) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

type toolSchemas struct {
	input, output *jsonschema.Schema
	err           error
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[*tools.Tool]toolSchemas{}
)

// schemasOf generates a tool's input and output schemas once per process:
// every listener, stdio server and test shares them.
func schemasOf(t *tools.Tool) toolSchemas {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[t]; ok {
		return s
	}
	var s toolSchemas
	s.input, s.err = jsonschema.ForType(t.ArgsType, schemaOptions)
	if s.err == nil && s.input.Type != "object" {
		s.err = fmt.Errorf("%s: arguments are a %s, not an object", t.Name, s.input.Type)
	}
	if s.err == nil {
		requireGiven(s.input)
		for name, p := range s.input.Properties {
			if choices := t.ArgChoices(name); len(choices) > 0 {
				p.Enum = enumOf(choices)
			}
		}
	}
	// An output schema describes structuredContent, which must be an
	// object: results that are not structs go without one.
	rt := t.ResultType
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if s.err == nil && rt.Kind() == reflect.Struct {
		if out, err := jsonschema.ForType(t.ResultType, schemaOptions); err == nil {
			s.output = out
		}
	}
	schemaCache[t] = s
	return s
}

// requireGiven takes null out of the types of the required properties of
// s and of every object schema inside it.
func requireGiven(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for _, name := range s.Required {
		p := s.Properties[name]
		if p == nil || !slices.Contains(p.Types, "null") {
			continue
		}
		types := slices.DeleteFunc(slices.Clone(p.Types), func(t string) bool { return t == "null" })
		if len(types) == 1 {
			p.Type, p.Types = types[0], nil
		} else {
			p.Types = types
		}
	}
	for _, p := range s.Properties {
		requireGiven(p)
	}
	requireGiven(s.Items)
}
