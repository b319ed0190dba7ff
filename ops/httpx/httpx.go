// Package httpx is the HTTP the faces share, below them all: JSON
// bodies and the JSON error every refusal carries, the status of each
// kind of ops error, request bodies read strictly and in good time, the
// names (headers, paths, origins) that the holder of a file and the
// wefts relaying to it agree on, and the Mount and Face values by which
// a face hands its paths to the listener (ops/listen).
package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"weft/formats"
	"weft/ops"
)

// APIError is the body of every refused HTTP request but the proxy's
// (which answers in its provider's shape).
type APIError struct {
	Error string `json:"error"`
}

// WriteJSONBody answers with status and body, a JSON value already
// encoded.
func WriteJSONBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// WriteJSON answers with status and v, encoded as the tools' results
// are (formats.Encode).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := formats.Encode(v)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "cannot encode the result: "+err.Error())
		return
	}
	WriteJSONBody(w, status, b)
}

// WriteError refuses a request with status and an APIError saying msg.
func WriteError(w http.ResponseWriter, status int, msg string) {
	b, _ := formats.Encode(APIError{msg})
	WriteJSONBody(w, status, b)
}

// StatusOf maps an error's kind to its HTTP status.
func StatusOf(err error) int {
	switch {
	case errors.Is(err, ops.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ops.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ops.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ops.ErrSummarySource):
		return http.StatusBadGateway // the model weft asked failed, not weft
	}
	return http.StatusInternalServerError
}

// ReadArgs reads a JSON body (empty: no arguments) into v, strictly, or
// answers the request and returns false.
func ReadArgs(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		BodyReadError(w, err)
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("%s takes a JSON object of its arguments: %v", r.URL.Path, err))
		return false
	}
	return true
}

// PostOnly answers a request that is not a POST, saying so, and reports
// whether it was one.
func PostOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodPost {
		return true
	}
	w.Header().Set("Allow", http.MethodPost)
	WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: use POST", r.Method, r.URL.Path))
	return false
}
