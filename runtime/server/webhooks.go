package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// deliveryIDPattern is the shape of delivery IDs (an event ID, a dash, a webhook name); anything else is not
// found without asking the store.
var deliveryIDPattern = regexp.MustCompile(`^evt_[A-Za-z0-9_-]{1,32}-[a-z0-9][-a-z0-9.]{0,252}$`)

var (
	deliveryStatuses = []string{store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed, store.DeliveryCancelled}
	eventTypes       = event.Types
)

type deliveryJSON struct {
	ID             string     `json:"id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	WebhookID      string     `json:"webhook_id"`
	URL            string     `json:"url"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      string     `json:"last_error,omitempty"`
	LastLatencyMS  *int64     `json:"last_latency_ms"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

type attemptJSON struct {
	At         time.Time `json:"at"`
	URL        string    `json:"url"`
	StatusCode *int      `json:"status_code"`
	LatencyMS  int64     `json:"latency_ms"`
	Error      string    `json:"error,omitempty"`
}

type deliveryDetailJSON struct {
	deliveryJSON
	Payload    json.RawMessage `json:"payload"`
	AttemptLog []attemptJSON   `json:"attempt_log"`
}

func toDeliveryJSON(d store.Delivery) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, WebhookID: d.WebhookID, URL: d.URL, Status: d.Status,
		Attempts: d.Attempts, LastError: d.LastError, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	}
	if d.Status == store.DeliveryPending {
		next := d.NextAttemptAt.UTC()
		out.NextAttemptAt = &next
	}
	if d.Attempts > 0 {
		code, latency := d.LastStatusCode, d.LastLatency.Milliseconds()
		out.LastLatencyMS = &latency
		if code != 0 {
			out.LastStatusCode = &code
		}
	}
	return out
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	var f store.DeliveryFilter
	if f.Limit, f.Cursor, err = pageParams(q); err != nil {
		return err
	}
	if f.From, f.To, err = timeRange(q); err != nil {
		return err
	}
	for _, p := range []struct {
		name    string
		allowed []string
		dst     *string
	}{{"status", deliveryStatuses, &f.Status}, {"event_type", eventTypes, &f.EventType}} {
		if v := q.Get(p.name); v != "" {
			if !slices.Contains(p.allowed, v) {
				return newError(http.StatusBadRequest, codeInvalidRequest, "%s must be one of %v, not %q", p.name, p.allowed, v)
			}
			*p.dst = v
		}
	}
	if f.WebhookID, err = textParam(q, "webhook_id"); err != nil {
		return err
	}
	list, next, err := s.store.ListDeliveries(r.Context(), m.MerchantID, f)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(list))
	for i, d := range list {
		out[i] = toDeliveryJSON(d)
	}
	writeJSON(w, http.StatusOK, newPage(out, next))
	return nil
}

func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id := r.PathValue("id")
	if !deliveryIDPattern.MatchString(id) {
		return notFound("delivery")
	}
	d, attempts, err := s.store.GetDelivery(r.Context(), m.MerchantID, id)
	if err != nil {
		return explain(err, store.ErrNotFound, "no such delivery")
	}
	out := deliveryDetailJSON{deliveryJSON: toDeliveryJSON(d), Payload: d.Payload, AttemptLog: make([]attemptJSON, len(attempts))}
	for i, a := range attempts {
		out.AttemptLog[i] = attemptJSON{At: a.At.UTC(), URL: a.URL, LatencyMS: a.Latency.Milliseconds(), Error: a.Error}
		if a.StatusCode != 0 {
			code := a.StatusCode
			out.AttemptLog[i].StatusCode = &code
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// sendTestEvent sends a webhook.test event to one of the merchant's webhooks, whatever the events it subscribes
// to, and answers with its delivery.
func (s *Server) sendTestEvent(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	// The ID is only looked up among the merchant's webhooks in its bundle: another merchant's is not found.
	d, err := s.chat.SendTestEvent(r.Context(), m, r.PathValue("id"))
	if err != nil {
		return explain(err, store.ErrNotFound, "no such webhook")
	}
	writeJSON(w, http.StatusAccepted, toDeliveryJSON(d))
	return nil
}

// replayDelivery sends a finished delivery again, with its event unchanged, and enables its endpoint again if a
// 410 had disabled it.
func (s *Server) replayDelivery(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id := r.PathValue("id")
	if !deliveryIDPattern.MatchString(id) {
		return notFound("delivery")
	}
	if !m.Plan.Webhooks {
		return newError(http.StatusForbidden, codeWebhooksNotInPlan, "the merchant's plan does not include webhooks")
	}
	d, err := s.chat.ReplayDelivery(r.Context(), m, id)
	if err != nil {
		return explain(err, store.ErrNotFound, "no such delivery")
	}
	writeJSON(w, http.StatusAccepted, toDeliveryJSON(d))
	return nil
}
