package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

func TestFailAnswersEachErrorByTheTable(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		status     int
		code       string
		message    string // a part of the message, when it matters
		retryAfter string
		logged     bool
	}{
		{"not found", store.ErrNotFound, 404, codeNotFound, "no such resource", "", false},
		{"not found, wrapped", fmt.Errorf("reading: %w", store.ErrNotFound), 404, codeNotFound, "", "", false},
		{"not found, explained", explain(store.ErrNotFound, store.ErrNotFound, "no such delivery"), 404, codeNotFound, "no such delivery", "", false},
		{"explained as another error", explain(store.ErrInvalidCursor, store.ErrNotFound, "no such delivery"), 400, codeInvalidCursor, "cursor", "", false},
		{"invalid cursor", store.ErrInvalidCursor, 400, codeInvalidCursor, "cursor", "", false},
		{"knowledge limit", store.ErrKnowledgeLimit, 403, codeKnowledgeLimit, "", "", false},
		{"not replayable", store.ErrNotReplayable, 409, codeDeliveryPending, "pending", "", false},
		{"conversation full", fmt.Errorf("answering: %w", chat.ErrConversationFull), 409, codeConversationFull, "leave conversation_id out", "", false},
		{"quota", &explained{err: store.ErrQuotaExceeded, message: "used up", retryAfter: 1500 * time.Millisecond}, 429, codeConversationQuota, "used up", "2", false},
		{"api error", newError(http.StatusTeapot, codeInvalidRequest, "short and stout"), 418, codeInvalidRequest, "short and stout", "", false},
		{"unexpected", errors.New("dial tcp 10.0.0.7:5432: secret detail"), 500, codeInternal, "request ID", "", true},
		{"unexpected, explained", explain(errors.New("secret detail"), store.ErrNotFound, "no such delivery"), 500, codeInternal, "request ID", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, &requestInfo{log: slog.New(slog.NewJSONHandler(&logs, nil))}))
			w := httptest.NewRecorder()
			fail(w, r, tc.err)
			var body errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("not an envelope: %v: %s", err, w.Body)
			}
			if w.Code != tc.status || body.Error.Code != tc.code || !strings.Contains(body.Error.Message, tc.message) {
				t.Errorf("got %d %+v, want %d %s %q", w.Code, body.Error, tc.status, tc.code, tc.message)
			}
			if strings.Contains(w.Body.String(), "secret") {
				t.Errorf("the answer leaks the error: %s", w.Body)
			}
			if got := w.Header().Get(headerRetryAfter); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if n := strings.Count(logs.String(), "request failed"); n != map[bool]int{false: 0, true: 1}[tc.logged] {
				t.Errorf("logged %d times: %s", n, logs.String())
			}
		})
	}
}

func TestFailLeavesAClosedRequestUnanswered(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	fail(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), fmt.Errorf("querying: %w", context.Canceled))
	if w.Code != statusClientClosed || w.Body.Len() != 0 {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
}
