package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeJSON reads a JSON request body into v, a pointer to a struct: the content type must be JSON, the body at
// most limit bytes, one object whose field names are v's exactly (no unknown, duplicate or differently cased
// ones), and every string storable text (no NUL), which is refused as validation_failed.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "Content-Type must be application/json, not %q", ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return jsonError(err, limit)
		}
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, limit)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body must hold exactly one JSON object")
	}
	if err := exactFields(body, reflect.TypeOf(v).Elem()); err != nil {
		return err
	}
	if f := unstorableField(reflect.ValueOf(v), "body"); f != "" {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s must be text without NUL characters", f)
	}
	return nil
}

// exactFields checks what encoding/json lets through: no object in body has a field twice, and the top-level
// object's field names are t's exactly, not merely equal ignoring case. body is valid JSON.
func exactFields(body []byte, t reflect.Type) error {
	known := map[string]bool{}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			known[jsonName(t.Field(i))] = true
		}
	}
	var stack []*jsonObject // nil entries are arrays
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not valid JSON")
		}
		var top *jsonObject
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				valueDone(stack)
				continue
			}
			name, _ := tok.(string)
			if top.seen[name] {
				return newError(http.StatusBadRequest, codeInvalidRequest, "field %q appears twice", name)
			}
			if len(stack) == 1 && len(known) > 0 && !known[name] {
				return newError(http.StatusBadRequest, codeInvalidRequest, "unknown field %q (field names are case-sensitive)", name)
			}
			top.seen[name] = true
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &jsonObject{seen: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone(stack)
		default:
			valueDone(stack)
		}
	}
}

// jsonObject is an object exactFields is inside.
type jsonObject struct {
	seen    map[string]bool
	wantKey bool // the next token is a field name
}

// valueDone notes that a value ended: inside an object, a field name comes next.
func valueDone(stack []*jsonObject) {
	if len(stack) > 0 && stack[len(stack)-1] != nil {
		stack[len(stack)-1].wantKey = true
	}
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
