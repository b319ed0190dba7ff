package ops

import (
	"errors"
	"fmt"
)

// Kinds of error every face maps to its own terms (HTTP status, MCP tool
// error, CLI exit code). Test with errors.Is.
var (
	ErrInvalid  = errors.New("invalid argument")
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("version conflict")
)

// Error is a refused request: what was wrong and what would be right.
type Error struct {
	Kind error
	Msg  string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the kind, so errors.Is(err, ErrInvalid) works.
func (e *Error) Unwrap() error { return e.Kind }

// Invalidf refuses a request whose arguments are wrong (ErrInvalid).
func Invalidf(format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

// NotFoundf refuses a request for something that is not there (ErrNotFound).
func NotFoundf(format string, args ...any) error {
	return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf(format, args...)}
}

// Conflictf refuses a request made against a state that has changed
// (ErrConflict).
func Conflictf(format string, args ...any) error {
	return &Error{Kind: ErrConflict, Msg: fmt.Sprintf(format, args...)}
}

// PanicError is a tool handler that panicked: a bug in weft, not in the
// request. The request gets an internal error; the stack goes to the
// service's log.
type PanicError struct {
	Tool  string
	Value any
	Stack []byte
}

// Error says what happened in words. The panic's value and stack are
// Go's own text, for the log, not for whoever made the request.
func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error in %s: a bug in weft stopped it (the log has the details)", e.Tool)
}
