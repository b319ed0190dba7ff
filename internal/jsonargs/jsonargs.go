// Package jsonargs reads the arguments of a call, given as a JSON object
// or as key=value words, into a struct of the callee's, strictly: an
// unknown argument, a value of the wrong type or trailing data is an
// error that names the argument and what it takes. The tool registry
// (ops/tools) decodes every tool's arguments with it, and ops's tests
// decode theirs the same way.
package jsonargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Decode reads a JSON object into a new value of type t and returns a
// pointer to it. name is the callee's, for the errors; an empty body or
// null is no arguments. Every error is a refusal of the arguments.
func Decode(name string, t reflect.Type, raw json.RawMessage) (any, error) {
	args := reflect.New(t).Interface()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("%s takes a JSON object of arguments (%s)", name, strings.Join(Names(t), ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(args); err != nil {
		return nil, decodeError(name, t, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the arguments object", name)
	}
	return args, nil
}

func decodeError(name string, t reflect.Type, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		if field == "" {
			return fmt.Errorf("%s: arguments must be a JSON object", name)
		}
		return fmt.Errorf("%s: argument %s must be %s, not a JSON %s", name, field, describeType(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("%s: arguments are not valid JSON (at byte %d: %v)", name, syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		arg := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return fmt.Errorf("%s has no argument %q; it takes: %s", name, arg, strings.Join(Names(t), ", "))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("%s: the arguments JSON ends too soon", name)
	}
	return fmt.Errorf("%s: %v", name, err)
}

func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	}
	return "an object"
}

// arg is one argument, flattened through embedded structs.
type arg struct {
	name string
	typ  reflect.Type
}

func argsOf(t reflect.Type) []arg {
	var out []arg
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, argsOf(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, arg{name, f.Type})
	}
	return out
}

// Names lists the arguments of struct type t by their JSON names,
// embedded structs' included.
func Names(t reflect.Type) []string {
	var names []string
	for _, a := range argsOf(t) {
		names = append(names, a.name)
	}
	return names
}

// FromPairs turns key=value words (as typed on a command line) into
// the JSON arguments of struct type t, reading each value by its
// argument's type: strings as they are, numbers and booleans parsed,
// lists as JSON or comma-separated, objects as JSON. name is the
// callee's, for the errors; every error is a refusal of the words.
func FromPairs(name string, t reflect.Type, pairs []string) (json.RawMessage, error) {
	args := argsOf(t)
	obj := make(map[string]json.RawMessage, len(pairs))
	for _, p := range pairs {
		key, val, ok := strings.Cut(p, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("%q is not key=value; %s takes: %s", p, name, strings.Join(Names(t), ", "))
		}
		i := slices.IndexFunc(args, func(a arg) bool { return a.name == key })
		if i < 0 {
			return nil, fmt.Errorf("%s has no argument %q; it takes: %s", name, key, strings.Join(Names(t), ", "))
		}
		if _, dup := obj[key]; dup {
			return nil, fmt.Errorf("argument %s is given twice", key)
		}
		raw, err := pairValue(args[i].typ, val)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %v", key, err)
		}
		obj[key] = raw
	}
	return json.Marshal(obj)
}

func pairValue(t reflect.Type, val string) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return json.Marshal(val)
	case reflect.Slice:
		if strings.HasPrefix(strings.TrimSpace(val), "[") {
			break
		}
		if val == "" {
			return json.RawMessage("[]"), nil
		}
		var items []json.RawMessage
		for _, part := range strings.Split(val, ",") {
			item, err := pairValue(t.Elem(), strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return json.Marshal(items)
	}
	// Numbers, booleans, objects and JSON lists are written as JSON.
	if !json.Valid([]byte(val)) {
		return nil, fmt.Errorf("want %s, got %q", describeType(t), val)
	}
	return json.RawMessage(val), nil
}
