package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
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
	// codeConversationRateLimited refuses a new conversation past the plan's abuse limits.
	codeConversationRateLimited = "conversation_rate_limited"
	codeConversationQuota       = "conversation_quota_exceeded"
	codeConversationFull        = "conversation_full"
	codeConversationClosed      = "conversation_closed"
	// codeSourceDeclared refuses to change a knowledge source a KnowledgeSource object declares.
	codeSourceDeclared = "source_declared"
	// codeConversationIDReserved refuses a conversation ID a caller names that is the word of another endpoint.
	codeConversationIDReserved = "conversation_id_reserved"
	// codeConversationLimit and codeVisitorLimit refuse a turn past the plan's bounds per conversation and per
	// visitor.
	codeConversationLimit = "conversation_limit_reached"
	codeVisitorLimit      = "visitor_limit_reached"
	// codeModelNotConfigured refuses what needs a model of a merchant no model answers; codeTokenQuota what
	// needs one once the plan's monthly model tokens are used up; codeModelFailed and codeModelTimeout are a
	// model that failed or did not answer in time.
	codeModelNotConfigured = "model_not_configured"
	codeTokenQuota         = "token_quota_exceeded"
	codeModelFailed        = "model_failed"
	codeModelTimeout       = "model_timeout"
	codeInternal           = "internal_error"
	codeUnavailable        = "unavailable"
)

// apiError is an error with the status and code the client gets. Its message is safe to show: it never holds a
// key, a token or another merchant's data.
type apiError struct {
	status  int
	code    string
	message string
	// challenge is the WWW-Authenticate header of a 401: how to authenticate (RFC 9110, section 11.6.1).
	challenge string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// Challenges of the two kinds of credential: an API key in its header (a scheme of our own, as RFC 9110 has
// none for it) and an ID token as an OAuth bearer token (RFC 6750).
const (
	keyChallenge          = `APIKey realm="parley", header="X-API-Key"`
	bearerChallenge       = `Bearer realm="parley"`
	invalidTokenChallenge = `Bearer realm="parley", error="invalid_token"`
)

// unauthorized is a 401 with its challenge.
func unauthorized(challenge, message string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: codeUnauthorized, message: message, challenge: challenge}
}

// internalError is the answer to anything unexpected: it reveals nothing of what went wrong.
func internalError() *apiError {
	return newError(http.StatusInternalServerError, codeInternal, "something went wrong on our side; quote the request ID when reporting it")
}

// domainErrors is the one table from the domain's errors to the client's status and code, matched in order with
// errors.Is. Each message is the default; a handler that knows more (which resource, the plan's number) says it
// with explain, and status and code stay the table's.
var domainErrors = []struct {
	err     error
	status  int
	code    string
	message string
}{
	{store.ErrNotFound, http.StatusNotFound, codeNotFound, "no such resource"},
	{store.ErrInvalidCursor, http.StatusBadRequest, codeInvalidCursor, "the cursor is not one this listing issued"},
	{store.ErrQuotaExceeded, http.StatusTooManyRequests, codeConversationQuota, "the merchant's plan's new conversations for this month are used up; existing conversations go on"},
	{store.ErrKnowledgeLimit, http.StatusForbidden, codeKnowledgeLimit, "the merchant's plan's knowledge items are all used"},
	{store.ErrKnowledgeSizeLimit, http.StatusForbidden, codeKnowledgeLimit, "the item would pass the characters the merchant's plan allows in its knowledge base; shorten or delete items"},
	{chat.ErrNotVisitorsConversation, http.StatusNotFound, codeNotFound, "this visitor has no conversation of that ID; leave conversation_id out to start one"},
	{chat.ErrConversationFull, http.StatusConflict, codeConversationFull, fmt.Sprintf("the conversation has reached its %d messages; go on in a new one: leave conversation_id out", chat.MaxConversationMessages)},
	{errTooManyStreams, http.StatusServiceUnavailable, codeUnavailable, "this runtime holds as many live streams as it may; retry later"},
	{chat.ErrConversationClosed, http.StatusConflict, codeConversationClosed, "the conversation is closed; go on in a new one: leave conversation_id out"},
	{chat.ErrEmptyMessage, http.StatusUnprocessableEntity, codeValidationFailed, "text must not be empty"},
	{chat.ErrConversationLimit, http.StatusTooManyRequests, codeConversationLimit, "the conversation has had the answers or model tokens the merchant's plan allows; go on in a new one: leave conversation_id out"},
	{chat.ErrVisitorLimit, http.StatusTooManyRequests, codeVisitorLimit, "this visitor has had the answers or model tokens the merchant's plan allows in a day"},
	{chat.ErrSourceLimit, http.StatusForbidden, codeKnowledgeLimit, "the merchant's plan's knowledge sources are all used"},
	{chat.ErrSourceDeclared, http.StatusConflict, codeSourceDeclared, "the knowledge source is declared by a KnowledgeSource object; change or delete that object instead"},
	{chat.ErrWebhooksNotInPlan, http.StatusForbidden, codeWebhooksNotInPlan, "the merchant's plan does not include webhooks"},
	{chat.ErrTooManyExports, http.StatusTooManyRequests, codeRateLimited, "this merchant runs as many exports as it may at once; retry shortly"},
	{assistant.ErrNoModel, http.StatusConflict, codeModelNotConfigured, "no model answers this merchant: its plan names none, or the runtime declares none"},
	{chat.ErrTokensUsedUp, http.StatusTooManyRequests, codeTokenQuota, "the merchant's plan's model tokens for this month are used up"},
	{assistant.ErrModelTimedOut, http.StatusGatewayTimeout, codeModelTimeout, "the model did not answer in time; try again"},
	{assistant.ErrModelFailed, http.StatusBadGateway, codeModelFailed, "the model failed to answer; try again"},
	{store.ErrNotReplayable, http.StatusConflict, codeDeliveryPending, "the delivery is still pending; replay it once it has succeeded, failed or been cancelled"},
}

// explained is a domain error with what the handler knows and the table cannot: a message naming the resource
// or the plan's number and, for a refusal that passes, when to retry.
type explained struct {
	err        error
	message    string
	retryAfter time.Duration
}

func (e *explained) Error() string { return e.err.Error() + ": " + e.message }

func (e *explained) Unwrap() error { return e.err }

// explain gives the client a more precise message than the table's when err is target; any other error, nil
// included, is returned unchanged.
func explain(err, target error, format string, args ...any) error {
	if !errors.Is(err, target) {
		return err
	}
	return &explained{err: err, message: fmt.Sprintf(format, args...)}
}

// notFound is the one answer for "does not exist" and "belongs to another merchant", so that nothing about
// another merchant's data can be detected.
func notFound(what string) error {
	return explain(store.ErrNotFound, store.ErrNotFound, "no such %s", what)
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// fail answers err in the error envelope: an apiError as it says, a domain error as domainErrors says, anything
// else as a 500 that reveals nothing of its text. Unexpected errors are logged here, once; handlers only return
// them.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		// The client went away mid-request: nothing failed on our side and nobody reads the answer.
		logger(r).Debug("client closed the request", "error", err)
		w.WriteHeader(statusClientClosed)
		return
	}
	ae := answer(w, err)
	if ae == nil {
		logger(r).Error("request failed", "error", err)
		ae = internalError()
	}
	if ae.challenge != "" {
		w.Header().Set("WWW-Authenticate", ae.challenge)
	}
	writeJSON(w, ae.status, errorBody{Error: errorDetail{Code: ae.code, Message: ae.message, RequestID: requestID(r)}})
}

// answer is what the client is told of err, with its Retry-After header set when it has one; nil when err is
// not an error the client may be told about.
func answer(w http.ResponseWriter, err error) *apiError {
	if ae := (*apiError)(nil); errors.As(err, &ae) {
		return ae
	}
	for _, e := range domainErrors {
		if !errors.Is(err, e.err) {
			continue
		}
		ae := &apiError{status: e.status, code: e.code, message: e.message}
		if ex := (*explained)(nil); errors.As(err, &ex) {
			ae.message = ex.message
			if ex.retryAfter > 0 {
				w.Header().Set(headerRetryAfter, strconv.Itoa(max(1, ceilSeconds(ex.retryAfter))))
			}
		}
		return ae
	}
	return nil
}

// statusClientClosed is the status recorded, after nginx, when the client closes the request before the answer.
const statusClientClosed = 499
