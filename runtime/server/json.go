package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"
)

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeJSONBody answers body, already encoded, as JSON with status.
func writeJSONBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	_, _ = w.Write(body) //nolint:gosec // JSON, its strings escaped (HTML's <, > and & too), sent as application/json
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
	if len(bytes.TrimLeft(body[dec.InputOffset():], jsonSpace)) > 0 {
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

// jsonSpace is the white space JSON allows between values.
const jsonSpace = " \t\n\r"

// exactFields checks what encoding/json lets through: no object in body has a field twice, and the top-level
// object's field names are t's exactly, not merely equal ignoring case. body is one valid JSON value, which
// lets it be scanned byte by byte, without the allocations of a token stream.
func exactFields(body []byte, t reflect.Type) error {
	var buf [8]jsonObject
	stack := buf[:0] // the containers the scan is inside, innermost last
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			stack = append(stack, jsonObject{isObject: true, wantKey: true})
		case '[':
			stack = append(stack, jsonObject{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := len(stack) - 1; stack[top].isObject {
				stack[top].wantKey = true
			}
		case '"':
			end := stringEnd(body, i)
			if top := len(stack) - 1; top >= 0 && stack[top].wantKey {
				name := jsonKey(body[i : end+1])
				if !stack[top].add(name) {
					return newError(http.StatusBadRequest, codeInvalidRequest, "field %q appears twice", name)
				}
				if top == 0 && !knownField(t, name) {
					return newError(http.StatusBadRequest, codeInvalidRequest, "unknown field %q (field names are case-sensitive)", name)
				}
				stack[top].wantKey = false
			}
			i = end
		}
	}
	return nil
}

// stringEnd returns the index of the quote that ends the JSON string starting at body[start].
func stringEnd(body []byte, start int) int {
	for i := start + 1; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++ // the escaped character, which may be a quote
		case '"':
			return i
		}
	}
	return len(body) - 1 // not reached: body is valid JSON
}

// jsonKey returns the text of a quoted JSON string, as encoding/json decodes it.
func jsonKey(quoted []byte) []byte {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return raw
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // valid: it is part of a valid body
	return []byte(s)
}

// knownField reports whether name is the JSON name of one of t's fields; anything is known when t is no struct.
func knownField(t reflect.Type, name []byte) bool {
	if t.Kind() != reflect.Struct || t.NumField() == 0 {
		return true
	}
	for i := range t.NumField() {
		if jsonName(t.Field(i)) == string(name) {
			return true
		}
	}
	return false
}

// jsonObject is a container exactFields is inside: an object, or an array.
type jsonObject struct {
	isObject bool
	wantKey  bool // the next string is a field name
	// names are the object's field names so far; past a few, in many too, so that a body of many fields
	// cannot make the check quadratic.
	names [][]byte
	many  map[string]bool
}

// add notes an object's field name, and reports false when the object already has it.
func (o *jsonObject) add(name []byte) bool {
	if o.many != nil {
		if o.many[string(name)] {
			return false
		}
		o.many[string(name)] = true
		return true
	}
	for _, n := range o.names {
		if bytes.Equal(n, name) {
			return false
		}
	}
	o.names = append(o.names, name)
	if len(o.names) > 8 {
		o.many = make(map[string]bool, 2*len(o.names))
		for _, n := range o.names {
			o.many[string(n)] = true
		}
		o.names = nil
	}
	return true
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
