package chat

import (
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// eventsPerWrite is the most events one write produces: a conversation and a lead.
const eventsPerWrite = 2

// Route says where a merchant's events go: to each of its webhooks subscribed to the event's type, when the plan
// has webhooks, and nowhere otherwise.
func Route(m *tenant.Bundle) store.Outbox {
	subs := Subscribers(m)
	if len(subs) == 0 {
		return store.Outbox{}
	}
	eventIDs := make([]string, eventsPerWrite)
	for i := range eventIDs {
		eventIDs[i] = ids.New("evt_")
	}
	return store.Outbox{EventIDs: eventIDs, Subscribers: subs}
}

// Subscribers lists, by event type, the endpoints of the merchant's webhooks subscribed to it; nil when the plan
// has no webhooks.
func Subscribers(m *tenant.Bundle) map[string][]store.Endpoint {
	if !m.Plan.Webhooks || len(m.Webhooks) == 0 {
		return nil
	}
	subs := map[string][]store.Endpoint{}
	for _, w := range m.Webhooks {
		for _, e := range w.Events {
			subs[string(e)] = append(subs[string(e)], store.Endpoint{WebhookID: w.ID, URL: w.URL})
		}
	}
	return subs
}
