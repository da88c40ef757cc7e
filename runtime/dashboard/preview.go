package dashboard

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/input"
)

// The settings page's live preview is the real widget.js in preview mode: instead of a publishable key from an
// allowed origin, its calls carry the owner's session cookie and CSRF token (X-CSRF-Token) to the endpoints here,
// which answer in the API's shapes. The widget's origin rules for visitors are untouched, and nothing a preview
// says is stored; its model tokens are counted against the merchant's plan (chat.Service.Preview).

// maxPreviewMessage bounds a preview message, as the API bounds a visitor's.
const (
	maxPreviewMessage = 4000
	maxPreviewBody    = 64 << 10
)

// preview runs h for a call of the widget in preview mode: same origin, a session, its CSRF token in the
// X-CSRF-Token header, a merchant chosen, and the owners' rate. Refusals are the API's error envelope, which the
// widget reads.
func (d *Dashboard) preview(h handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		refuseUnread(w)
		previewError(w, http.StatusForbidden, "forbidden", "cross-site request refused")
	}))
	return cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := d.session(r)
		if err != nil {
			d.log.ErrorContext(r.Context(), "dashboard preview failed", "error", err)
			previewError(w, http.StatusInternalServerError, "internal_error", "something went wrong")
			return
		}
		if !ok || !sameToken(s, r.Header.Get("X-CSRF-Token")) {
			refuseUnread(w)
			previewError(w, http.StatusForbidden, "forbidden", "sign in to the dashboard and reload the page")
			return
		}
		v := d.newView(r, s)
		if v.merchant == nil {
			previewError(w, http.StatusForbidden, "forbidden", "choose a merchant you own first")
			return
		}
		if d.limit(w, r, v.merchant) != nil { // its only refusal: past the owners' rate
			previewError(w, http.StatusTooManyRequests, "rate_limited", "too many requests from the merchant's owners")
			return
		}
		if err := h(w, r, v); err != nil {
			d.log.ErrorContext(r.Context(), "dashboard preview failed", "error", err)
			previewError(w, http.StatusInternalServerError, "internal_error", "something went wrong")
		}
	}))
}

// previewWidget answers the widget's settings, as GET /api/v1/widget does.
func (d *Dashboard) previewWidget(w http.ResponseWriter, _ *http.Request, v *view) error {
	m := v.merchant
	writePreviewJSON(w, http.StatusOK, map[string]any{"merchant_id": m.MerchantID, "display_name": m.DisplayName,
		"title": m.Widget.Title, "greeting": m.Widget.Greeting, "color": m.Widget.Color, "position": m.Widget.Position,
		"locale": m.Widget.Locale, "locale_fixed": m.Widget.FixedLocale})
	return nil
}

type previewSource struct {
	KnowledgeID string `json:"knowledge_id"`
	Title       string `json:"title"`
	URL         string `json:"url,omitempty"`
}

// previewChat answers a preview message in the shape of POST /api/v1/chat's answer; the conversation ID is
// always "preview", since nothing is stored.
func (d *Dashboard) previewChat(w http.ResponseWriter, r *http.Request, v *view) error {
	var in struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPreviewBody)).Decode(&in); err != nil {
		previewError(w, http.StatusBadRequest, "invalid_request", "the body must be JSON with a message")
		return nil
	}
	msg := strings.TrimSpace(in.Message)
	if msg == "" || utf8.RuneCountInString(msg) > maxPreviewMessage || !input.Storable(msg) {
		previewError(w, http.StatusUnprocessableEntity, "validation_failed", "the message must be 1 to 4000 characters of text")
		return nil
	}
	reply, err := d.chat.Preview(r.Context(), v.merchant, msg)
	if err != nil {
		if r.Context().Err() != nil {
			return nil // the owner went away; the tokens spent are counted
		}
		return err
	}
	sources := make([]previewSource, len(reply.Sources))
	for i, s := range reply.Sources {
		sources[i] = previewSource{KnowledgeID: s.KnowledgeID, Title: s.Title, URL: s.URL}
	}
	writePreviewJSON(w, http.StatusOK, map[string]any{"conversation_id": "preview", "answer": reply.Text, "sources": sources,
		"answered": reply.Answered, "created_at": d.now().UTC()})
	return nil
}

// previewPrefix is where the preview's endpoints are: what is addressed under it is the widget's script's call,
// answered in JSON whatever goes wrong.
const previewPrefix = prefix + "preview/"

func isPreview(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, previewPrefix) }

// previewError answers in the API's error envelope, with the ID the runtime's middleware gave the request (its
// X-Request-Id header), so that an owner's report can be found in the logs as an API caller's is.
func previewError(w http.ResponseWriter, status int, code, message string) {
	writePreviewJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": message,
		"request_id": w.Header().Get("X-Request-Id")}})
}

func writePreviewJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
