package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// Error codes, each documented in the OpenAPI document's ErrorCode schema.
const (
	codeInvalidRequest     = "invalid_request"
	codeInvalidCursor      = "invalid_cursor"
	codeUnauthorized       = "unauthorized"
	codeForbidden          = "forbidden"
	codeOriginNotAllowed   = "origin_not_allowed"
	codeSecretKeyInBrowser = "secret_key_in_browser"
	codeMerchantSuspended  = "merchant_suspended"
	codeAPIAccessNotInPlan = "api_access_not_in_plan"
	codeKnowledgeLimit     = "knowledge_limit_reached"
	codeWebhooksNotInPlan  = "webhooks_not_in_plan"
	codeDeliveryPending    = "delivery_pending"
	codeNotFound           = "not_found"
	codeMethodNotAllowed   = "method_not_allowed"
	codePayloadTooLarge    = "payload_too_large"
	codeUnsupportedMedia   = "unsupported_media_type"
	codeValidationFailed   = "validation_failed"
	codeRateLimited        = "rate_limited"
	codeConversationQuota  = "conversation_quota_exceeded"
	codeInternal           = "internal_error"
	codeUnavailable        = "unavailable"
)

// apiError is an error with the status and code the client gets. Its message is safe to show: it never holds a
// key, a token or another merchant's data.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// writeError answers with the error envelope. Errors that are not apiErrors are logged and answered as a 500
// that reveals nothing of their text.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		// The client went away mid-request: nothing failed on our side and nobody reads the answer.
		logger(r).Debug("client closed the request", "error", err)
		w.WriteHeader(statusClientClosed)
		return
	}
	if !errors.As(err, &ae) {
		logger(r).Error("request failed", "error", err)
		ae = newError(http.StatusInternalServerError, codeInternal, "something went wrong on our side; quote the request ID when reporting it")
	}
	writeJSON(w, ae.status, errorBody{Error: errorDetail{Code: ae.code, Message: ae.message, RequestID: requestID(r)}})
}

// statusClientClosed is the status recorded, after nginx, when the client closes the request before the answer.
const statusClientClosed = 499

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

func logger(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
