package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeJSON reads a JSON request body into v: the content type must be JSON, the body at most limit bytes, one
// document with no unknown fields.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "Content-Type must be application/json, not %q", ct)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, limit)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return jsonError(err, limit)
		}
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body must hold exactly one JSON object")
	}
	return nil
}

func isJSON(contentType string) bool {
	mediaType, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mediaType), contentTypeJSON)
}

// jsonError turns a decoding error into a message that says what is wrong and where.
func jsonError(err error, limit int64) error {
	var (
		syntax    *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		tooLarge  *http.MaxBytesError
		unknownFn = "json: unknown field "
	)
	switch {
	case errors.As(err, &tooLarge):
		return newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "the body is larger than %d bytes", limit)
	case errors.As(err, &syntax):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typeErr):
		return newError(http.StatusBadRequest, codeInvalidRequest, "field %q must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), unknownFn):
		return newError(http.StatusBadRequest, codeInvalidRequest, "unknown field %s", strings.TrimPrefix(err.Error(), unknownFn))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is empty or cut short; send a JSON object")
	default:
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not a valid JSON object")
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	default:
		return "a number"
	}
}
