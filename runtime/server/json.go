package server

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
	_, _ = w.Write(body)
}

// decodeJSON reads a JSON request body into v, a pointer to a struct: the content type must be JSON, the body at
// most limit bytes, one object whose field names are v's exactly (no unknown, duplicate or differently cased
// ones; JSON v2's rules, with unknown members rejected), valid UTF-8, and every string storable text (no NUL),
// which is refused as validation_failed.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "Content-Type must be application/json (UTF-8), not %q", ct)
	}
	// A coded body would be read as JSON and refused as malformed: say what is wrong instead (RFC 9110, 15.5.16).
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "Content-Encoding %q is not supported: send the body uncompressed", ce)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return jsonError(err, nil, limit)
		}
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body could not be read")
	}
	if err := jsonv2.Unmarshal(body, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		return jsonError(err, body, limit)
	}
	if f := unstorableField(reflect.ValueOf(v), "body"); f != "" {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s must be text without NUL characters", f)
	}
	return nil
}

// isJSON reports whether contentType is JSON, which is UTF-8 (RFC 8259): a charset, if given, must say so.
func isJSON(contentType string) bool {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != contentTypeJSON {
		return false
	}
	charset, ok := params["charset"]
	return !ok || strings.EqualFold(charset, "utf-8")
}

// jsonError turns an error decoding body into a message that says what is wrong and where.
func jsonError(err error, body []byte, limit int64) error {
	var (
		syntax   *jsontext.SyntacticError
		semantic *jsonv2.SemanticError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "the body is larger than %d bytes", limit)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is empty or cut short; send a JSON object")
	case errors.As(err, &syntax) && errors.Is(err, jsontext.ErrDuplicateName):
		return newError(http.StatusBadRequest, codeInvalidRequest, "field %q appears twice", fieldPath(syntax.JSONPointer))
	case errors.As(err, &syntax) && syntax.JSONPointer == "" && syntax.ByteOffset > 0 && syntax.ByteOffset <= int64(len(body)) &&
		jsontext.Value(body[:syntax.ByteOffset]).IsValid():
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body must hold exactly one JSON object")
	case errors.As(err, &syntax):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not valid JSON (at byte %d)", syntax.ByteOffset)
	case errors.As(err, &semantic) && errors.Is(err, jsonv2.ErrUnknownName):
		return newError(http.StatusBadRequest, codeInvalidRequest, "unknown field %q (field names are case-sensitive)", fieldPath(semantic.JSONPointer))
	case errors.As(err, &semantic) && semantic.GoType != nil && semantic.JSONKind != 0:
		return newError(http.StatusBadRequest, codeInvalidRequest, "field %q must be %s, not %s", fieldPath(semantic.JSONPointer),
			jsonKind(semantic.GoType), semantic.JSONKind.String())
	default:
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not a valid JSON object")
	}
}

// fieldPath is a JSON pointer to a field written as a dotted path, as the error messages name fields: /a/b is a.b.
func fieldPath(p jsontext.Pointer) string {
	return strings.Join(slices.Collect(p.Tokens()), ".")
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	default:
		return "a number"
	}
}
