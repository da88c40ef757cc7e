package chat_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func (h harness) outbox(t *testing.T) {
	t.Run("Events", h.outboxEvents)
	t.Run("NoSubscribers", h.outboxWithoutSubscribers)
	t.Run("Atomic", h.outboxAtomic)
	t.Run("Claims", h.deliveryClaims)
	t.Run("ConcurrentClaims", h.concurrentClaims)
	t.Run("FairClaims", h.fairClaims)
	t.Run("Attempts", h.deliveryAttempts)
	t.Run("DisabledEndpoint", h.disabledEndpoint)
	t.Run("Replay", h.replay)
	t.Run("ListDeliveries", h.listDeliveries)
}

var (
	hookA = store.Endpoint{WebhookID: "crm", URL: "https://crm.example.com/hooks"}
	hookB = store.Endpoint{WebhookID: "helpdesk", URL: "https://help.example.com/in"}
)

// subscribed builds an outbox with fresh event IDs where each event type goes to the endpoints.
func subscribed(endpoints ...store.Endpoint) store.Outbox {
	return store.Outbox{
		EventIDs: []string{storetest.NewID("evt"), storetest.NewID("evt")},
		Subscribers: map[string][]store.Endpoint{
			event.ConversationCreated: endpoints, event.LeadCreated: endpoints, event.LeadUpdated: endpoints,
		},
	}
}

// payload is the part of an event's payload the suite checks.
type payload struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	MerchantID string         `json:"merchant_id"`
	Timestamp  time.Time      `json:"timestamp"`
	Data       map[string]any `json:"data"`
}

func decodeEvent(t *testing.T, d store.Delivery) payload {
	t.Helper()
	var e payload
	if err := json.Unmarshal(d.Payload, &e); err != nil {
		t.Fatalf("payload of %s is not JSON: %v\n%s", d.ID, err, d.Payload)
	}
	if e.ID != d.EventID || e.Type != d.EventType || e.MerchantID != d.MerchantID {
		t.Errorf("payload %s does not match delivery %+v", d.Payload, d)
	}
	return e
}

func claim(t *testing.T, s store.Store, now time.Time) []store.Delivery {
	t.Helper()
	list, err := s.ClaimDeliveries(t.Context(), now, 30*time.Second, 100, 100)
	if err != nil {
		t.Fatalf("ClaimDeliveries: %v", err)
	}
	return list
}

func listAllDeliveries(t *testing.T, s store.Store, merchantID string, f store.DeliveryFilter) []store.Delivery {
	t.Helper()
	var all []store.Delivery
	for {
		list, next, err := s.ListDeliveries(t.Context(), merchantID, f)
		if err != nil {
			t.Fatalf("ListDeliveries: %v", err)
		}
		all = append(all, list...)
		if next == "" {
			return all
		}
		f.Cursor = next
	}
}

func recordAttempt(t *testing.T, s store.Store, a store.Attempt) {
	t.Helper()
	if err := chat.RecordAttempt(t.Context(), s, a); err != nil {
		t.Fatalf("RecordAttempt: %v", err)
	}
}

// outboxEvents writes conversation.created once per conversation, and lead.created then lead.updated, one
// delivery per subscribed endpoint.
func (h harness) outboxEvents(t *testing.T) {
	s := h.store(t)
	ex := withContact(storetest.Exchange("m1", "c1", storetest.Base, "I am ana@example.com", "thanks"), store.Contact{Email: "ana@example.com"})
	ex.Outbox = subscribed(hookA, hookB)
	if res := record(t, s, ex); res.Deliveries != 4 {
		t.Fatalf("%d deliveries, want 4 (two events to two endpoints)", res.Deliveries)
	}
	ex = withContact(storetest.Exchange("m1", "c1", storetest.Base.Add(time.Minute), "and +1 555 0100", "ok"), store.Contact{Phone: "+1 555 0100"})
	ex.Outbox = subscribed(hookA, hookB)
	if res := record(t, s, ex); res.Deliveries != 2 {
		t.Fatalf("%d deliveries for the lead's update, want 2", res.Deliveries)
	}
	ex = withContact(storetest.Exchange("m1", "c1", storetest.Base.Add(2*time.Minute), "+1 555 0100 again", "ok"), store.Contact{Phone: "+1 555 0100"})
	ex.Outbox = subscribed(hookA, hookB)
	if res := record(t, s, ex); res.Deliveries != 0 {
		t.Fatalf("%d deliveries for an unchanged lead, want 0", res.Deliveries)
	}

	due := claim(t, s, storetest.Base.Add(time.Hour))
	if len(due) != 6 {
		t.Fatalf("claimed %d deliveries, want 6", len(due))
	}
	types := map[string]int{}
	for _, d := range due {
		e := decodeEvent(t, d)
		types[e.Type]++
		if d.Status != store.DeliveryPending || d.Attempts != 0 {
			t.Errorf("new delivery %+v", d)
		}
		switch e.Type {
		case event.ConversationCreated:
			if e.Data["conversation_id"] != "c1" || e.Data["first_message"] != "I am ana@example.com" {
				t.Errorf("conversation.created data = %v", e.Data)
			}
		case event.LeadUpdated:
			if e.Data["phone"] != "+1 555 0100" || e.Data["email"] != "ana@example.com" || e.Data["source"] != "chat" {
				t.Errorf("lead.updated data = %v", e.Data)
			}
		}
	}
	want := map[string]int{event.ConversationCreated: 2, event.LeadCreated: 2, event.LeadUpdated: 2}
	if !mapsEqual(types, want) {
		t.Errorf("event types %v, want %v", types, want)
	}

	res, err := chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "m1", ID: storetest.NewID("lead"), At: storetest.Base,
		Contact: store.Contact{Email: "form@example.com"}, Outbox: subscribed(hookA)})
	if err != nil || res.Deliveries != 1 {
		t.Fatalf("SaveLead: %d deliveries, %v; want 1", res.Deliveries, err)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// outboxWithoutSubscribers writes no event for types nobody subscribed to.
func (h harness) outboxWithoutSubscribers(t *testing.T) {
	s := h.store(t)
	ex := withContact(storetest.Exchange("m1", "c1", storetest.Base, "ana@example.com", "ok"), store.Contact{Email: "ana@example.com"})
	ex.Outbox = store.Outbox{EventIDs: []string{storetest.NewID("evt"), storetest.NewID("evt")},
		Subscribers: map[string][]store.Endpoint{event.LeadUpdated: {hookA}}}
	if res := record(t, s, ex); res.Deliveries != 0 {
		t.Errorf("%d deliveries, want none", res.Deliveries)
	}
	if d := listAllDeliveries(t, s, "m1", store.DeliveryFilter{}); len(d) != 0 {
		t.Errorf("deliveries %+v", d)
	}
}

// outboxAtomic writes nothing of an exchange whose events cannot be written.
func (h harness) outboxAtomic(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "hello", "hi")
	ex.Outbox = subscribed(hookA)
	ex.Outbox.EventIDs = nil
	if _, err := chat.RecordExchange(t.Context(), s, ex); err == nil {
		t.Fatal("an exchange whose event has no ID was recorded")
	}
	if storetest.Exists(t, s, "m1", "c1") || storetest.ThisMonth(t, s, "m1", storetest.Base) != 0 {
		t.Error("the conversation was written without its event")
	}
}

func (h harness) deliveryClaims(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "hello", "hi")
	ex.Outbox = subscribed(hookA)
	record(t, s, ex)

	if got := claim(t, s, storetest.Base.Add(-time.Second)); len(got) != 0 {
		t.Errorf("claimed a delivery before it was due: %+v", got)
	}
	first := claim(t, s, storetest.Base)
	if len(first) != 1 {
		t.Fatalf("claimed %d, want 1", len(first))
	}
	if again := claim(t, s, storetest.Base.Add(10*time.Second)); len(again) != 0 {
		t.Errorf("claimed a leased delivery: %+v", again)
	}
	// Its holder died: once the lease ends, another claims it.
	if after := claim(t, s, storetest.Base.Add(31*time.Second)); len(after) != 1 || after[0].ID != first[0].ID {
		t.Errorf("after the lease: %+v", after)
	}
}

// concurrentClaims never hands one delivery to two claimers at once.
func (h harness) concurrentClaims(t *testing.T) {
	s := h.store(t)
	for range 40 {
		ex := storetest.Exchange("m1", storetest.NewID("c"), storetest.Base, "hello", "hi")
		ex.Outbox = subscribed(hookA)
		record(t, s, ex)
	}
	claimed := make([][]store.Delivery, 8)
	errs := storetest.RunConcurrently(8, func(i int) error {
		var err error
		claimed[i], err = s.ClaimDeliveries(t.Context(), storetest.Base, time.Minute, 10, 100)
		return err
	})
	storetest.CountErrors(t, errs, nil)
	seen := map[string]bool{}
	for _, list := range claimed {
		for _, d := range list {
			if seen[d.ID] {
				t.Errorf("delivery %s claimed twice", d.ID)
			}
			seen[d.ID] = true
		}
	}
	if len(seen) != 40 {
		t.Errorf("%d deliveries claimed, want 40", len(seen))
	}
}

// fairClaims never leases more than perMerchant deliveries of one merchant at once, so that a merchant with many
// deliveries due (or a slow endpoint holding its leases) leaves room for the others, even those due later.
func (h harness) fairClaims(t *testing.T) {
	s := h.store(t)
	for i := range 6 {
		ex := storetest.Exchange("m1", storetest.NewID("c"), storetest.Base.Add(time.Duration(i)*time.Millisecond), "hello", "hi")
		ex.Outbox = subscribed(hookA)
		record(t, s, ex)
	}
	ex := storetest.Exchange("m2", "c-m2", storetest.Base.Add(time.Second), "hello", "hi")
	ex.Outbox = subscribed(hookA)
	record(t, s, ex)
	now := storetest.Base.Add(2 * time.Second)
	first, err := s.ClaimDeliveries(t.Context(), now, time.Minute, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, d := range first {
		per[d.MerchantID]++
	}
	if per["m1"] != 2 || per["m2"] != 1 {
		t.Fatalf("claimed %v, want 2 of m1 and m2's 1", per)
	}
	// m1's two are in flight: none more of m1 until one ends.
	if again, err := s.ClaimDeliveries(t.Context(), now, time.Minute, 10, 2); err != nil || len(again) != 0 {
		t.Fatalf("claimed %d more while m1 has 2 in flight: %v", len(again), err)
	}
	if err := chat.RecordAttempt(t.Context(), s, store.Attempt{MerchantID: "m1", DeliveryID: first[0].ID, At: now,
		StatusCode: 200, Status: store.DeliverySucceeded}); err != nil {
		t.Fatal(err)
	}
	if next, err := s.ClaimDeliveries(t.Context(), now, time.Minute, 10, 2); err != nil || len(next) != 1 || next[0].MerchantID != "m1" {
		t.Fatalf("after one of m1's ended: %+v, %v; want one more of m1", next, err)
	}
}

func (h harness) deliveryAttempts(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "hello", "hi")
	ex.Outbox = subscribed(hookA)
	record(t, s, ex)
	d := claim(t, s, storetest.Base)[0]

	retryAt := storetest.Base.Add(5 * time.Second)
	recordAttempt(t, s, store.Attempt{MerchantID: "m1", DeliveryID: d.ID, At: storetest.Base, URL: hookA.URL, StatusCode: 503,
		Latency: 120 * time.Millisecond, Error: "503 Service Unavailable", Status: store.DeliveryPending, NextAttemptAt: retryAt})
	if got := claim(t, s, retryAt.Add(-time.Millisecond)); len(got) != 0 {
		t.Errorf("claimed before the retry is due: %+v", got)
	}
	d = claim(t, s, retryAt)[0]
	if d.Attempts != 1 || d.LastStatusCode != http.StatusServiceUnavailable || d.LastLatency != 120*time.Millisecond {
		t.Errorf("after one failed attempt: %+v", d)
	}
	recordAttempt(t, s, store.Attempt{MerchantID: "m1", DeliveryID: d.ID, At: retryAt, URL: hookA.URL, StatusCode: 204,
		Latency: 30 * time.Millisecond, Status: store.DeliverySucceeded})
	if got := claim(t, s, retryAt.Add(time.Hour)); len(got) != 0 {
		t.Errorf("claimed a succeeded delivery: %+v", got)
	}
	got, attempts, err := s.GetDelivery(t.Context(), "m1", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.DeliverySucceeded || got.Attempts != 2 || got.LastStatusCode != http.StatusNoContent || len(attempts) != 2 ||
		attempts[0].StatusCode != http.StatusServiceUnavailable || attempts[1].StatusCode != http.StatusNoContent || attempts[0].URL != hookA.URL {
		t.Errorf("delivery %+v, attempts %+v", got, attempts)
	}
	storetest.CheckTime(t, "first attempt", attempts[0].At, storetest.Base)

	_, _, err = s.GetDelivery(t.Context(), "other", d.ID)
	storetest.WantErr(t, "another merchant's delivery", err, store.ErrNotFound)
	err = chat.RecordAttempt(t.Context(), s, store.Attempt{MerchantID: "other", DeliveryID: d.ID, At: storetest.Base, Status: store.DeliveryFailed})
	storetest.WantErr(t, "an attempt on another merchant's delivery", err, store.ErrNotFound)
}

// disabledEndpoint: a 410 fails the delivery, cancels the endpoint's others and the ones after, until a replay.
func (h harness) disabledEndpoint(t *testing.T) {
	s := h.store(t)
	for _, c := range []string{"c1", "c2"} {
		ex := storetest.Exchange("m1", c, storetest.Base, "hello", "hi")
		ex.Outbox = subscribed(hookA, hookB)
		record(t, s, ex)
	}
	due := claim(t, s, storetest.Base)
	var gone store.Delivery
	for _, d := range due {
		if d.WebhookID == hookA.WebhookID {
			gone = d
			break
		}
	}
	recordAttempt(t, s, store.Attempt{MerchantID: "m1", DeliveryID: gone.ID, At: storetest.Base, URL: hookA.URL, StatusCode: 410,
		Error: "410 Gone", Status: store.DeliveryFailed, DisableEndpoint: true})
	statuses := func() map[string]int {
		out := map[string]int{}
		for _, d := range listAllDeliveries(t, s, "m1", store.DeliveryFilter{WebhookID: hookA.WebhookID}) {
			out[d.Status]++
		}
		return out
	}
	if got := statuses(); !mapsEqual(got, map[string]int{store.DeliveryFailed: 1, store.DeliveryCancelled: 1}) {
		t.Errorf("hookA's deliveries after 410: %v", got)
	}
	// An attempt at another delivery to the endpoint, in flight while the 410 came, ends it too, rather than
	// setting it pending again to be retried to the disabled endpoint.
	for _, d := range due {
		if d.WebhookID == hookA.WebhookID && d.ID != gone.ID {
			recordAttempt(t, s, store.Attempt{MerchantID: "m1", DeliveryID: d.ID, At: storetest.Base, URL: hookA.URL, StatusCode: 503,
				Error: "503 Service Unavailable", Status: store.DeliveryPending, NextAttemptAt: storetest.Base.Add(time.Minute)})
		}
	}
	if got := statuses(); !mapsEqual(got, map[string]int{store.DeliveryFailed: 1, store.DeliveryCancelled: 1}) {
		t.Errorf("hookA's deliveries after an attempt in flight during the 410: %v", got)
	}
	if got := listAllDeliveries(t, s, "m1", store.DeliveryFilter{WebhookID: hookB.WebhookID, Status: store.DeliveryPending}); len(got) != 2 {
		t.Errorf("hookB's pending deliveries = %d, want 2", len(got))
	}
	ex := storetest.Exchange("m1", "c3", storetest.Base, "hello", "hi")
	ex.Outbox = subscribed(hookA)
	record(t, s, ex)
	if got := statuses(); got[store.DeliveryCancelled] != 2 {
		t.Errorf("a delivery to the disabled endpoint was not cancelled: %v", got)
	}

	if _, err := chat.ReplayDelivery(t.Context(), s, "m1", gone.ID, storetest.Base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	ex = storetest.Exchange("m1", "c4", storetest.Base, "hello", "hi")
	ex.Outbox = subscribed(hookA)
	record(t, s, ex)
	if got := statuses(); got[store.DeliveryPending] != 2 {
		t.Errorf("after the replay, hookA's deliveries %v: want the replayed one and the new one pending", got)
	}
}

func (h harness) replay(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "hello", "hi")
	ex.Outbox = subscribed(hookA)
	record(t, s, ex)
	d := claim(t, s, storetest.Base)[0]
	_, err := chat.ReplayDelivery(t.Context(), s, "m1", d.ID, storetest.Base)
	storetest.WantErr(t, "replaying a pending delivery", err, store.ErrNotReplayable)
	recordAttempt(t, s, store.Attempt{MerchantID: "m1", DeliveryID: d.ID, At: storetest.Base, URL: hookA.URL, StatusCode: 200,
		Status: store.DeliverySucceeded})

	_, err = chat.ReplayDelivery(t.Context(), s, "other", d.ID, storetest.Base)
	storetest.WantErr(t, "replaying another merchant's delivery", err, store.ErrNotFound)
	_, err = chat.ReplayDelivery(t.Context(), s, "m1", "nope", storetest.Base)
	storetest.WantErr(t, "replaying an unknown delivery", err, store.ErrNotFound)

	later := storetest.Base.Add(time.Hour)
	r, err := chat.ReplayDelivery(t.Context(), s, "m1", d.ID, later)
	if err != nil || r.Status != store.DeliveryPending || r.EventID != d.EventID {
		t.Fatalf("replay = %+v, %v", r, err)
	}
	again := claim(t, s, later)
	if len(again) != 1 || again[0].EventID != d.EventID || string(again[0].Payload) != string(d.Payload) {
		t.Fatalf("the replayed delivery is not due with its event unchanged: %+v", again)
	}
}

func (h harness) listDeliveries(t *testing.T) {
	s := h.store(t)
	for i := range 5 {
		ex := withContact(storetest.Exchange("m1", storetest.NewID("c"), storetest.Base.Add(time.Duration(i)*time.Minute), "a@example.com", "ok"),
			store.Contact{Email: "a@example.com"})
		ex.Outbox = subscribed(hookA)
		record(t, s, ex)
	}
	all := listAllDeliveries(t, s, "m1", store.DeliveryFilter{Limit: 3})
	if len(all) != 10 {
		t.Fatalf("%d deliveries, want 10", len(all))
	}
	if !slices.IsSortedFunc(all, func(a, b store.Delivery) int { return b.CreatedAt.Compare(a.CreatedAt) }) {
		t.Error("deliveries are not newest first")
	}
	if got := listAllDeliveries(t, s, "m1", store.DeliveryFilter{EventType: event.LeadCreated}); len(got) != 5 {
		t.Errorf("%d lead.created deliveries, want 5", len(got))
	}
	if got := listAllDeliveries(t, s, "m1", store.DeliveryFilter{From: storetest.Base.Add(3 * time.Minute)}); len(got) != 4 {
		t.Errorf("%d deliveries from 3m, want 4", len(got))
	}
	if got := listAllDeliveries(t, s, "other", store.DeliveryFilter{}); len(got) != 0 {
		t.Errorf("another merchant lists m1's deliveries: %+v", got)
	}
	_, _, err := s.ListDeliveries(t.Context(), "m1", store.DeliveryFilter{Cursor: "bad"})
	storetest.WantErr(t, "a bad cursor", err, store.ErrInvalidCursor)
}
