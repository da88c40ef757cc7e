package event_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parley-dev/parley/runtime/api"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
)

// webhookSchemas returns, by event type, the schema of the request body the OpenAPI document's webhooks section
// gives for it. kin-openapi does not read the webhooks section of OpenAPI 3.1, so the section is read as JSON and
// its references resolved against the loaded document's components.
func webhookSchemas(t *testing.T) map[string]*openapi3.Schema {
	t.Helper()
	data, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Webhooks map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema struct {
							Ref string `json:"$ref"`
						} `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*openapi3.Schema{}
	for typ, w := range raw.Webhooks {
		ref := w.Post.RequestBody.Content["application/json"].Schema.Ref
		name, ok := strings.CutPrefix(ref, "#/components/schemas/")
		if !ok || doc.Components.Schemas[name] == nil {
			t.Fatalf("webhook %s: request body schema %q is not a component schema", typ, ref)
		}
		schemas[typ] = doc.Components.Schemas[name].Value
	}
	return schemas
}

// TestPayloadsMatchTheOpenAPIDocument builds every event type, with every field set and with only the required
// ones, and validates the payloads against the webhooks section.
func TestPayloadsMatchTheOpenAPIDocument(t *testing.T) {
	schemas := webhookSchemas(t)
	for _, typ := range event.Types {
		if schemas[typ] == nil {
			t.Errorf("event type %s is not in the OpenAPI document's webhooks section", typ)
		}
	}
	if len(schemas) != len(event.Types) {
		t.Errorf("the OpenAPI document documents %d webhooks, the runtime sends %d event types", len(schemas), len(event.Types))
	}

	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	full := store.Lead{ID: "lead_1", MerchantID: "acme", ConversationID: "conv_1", VisitorID: "v1",
		Contact: store.Contact{Name: "Ada", Email: "ada@example.com", Phone: "+441234567890", Message: "call me", Consent: true},
		Source:  store.LeadFromForm, CreatedAt: at, UpdatedAt: at.Add(time.Minute)}
	bare := store.Lead{ID: "lead_2", MerchantID: "acme", Contact: store.Contact{Email: "b@example.com"},
		Source: store.LeadFromChat, CreatedAt: at, UpdatedAt: at}
	exchange := store.Exchange{MerchantID: "acme", ConversationID: "conv_1", VisitorID: "v1",
		Question: store.Message{ID: "q", Text: "Do you ship to Norway?", CreatedAt: at}}
	anonymous := exchange
	anonymous.VisitorID = ""

	for _, tc := range []struct {
		name     string
		happened event.Happened
	}{
		{"conversation", event.ConversationStarted(exchange, store.StatusBot)},
		{"conversation without visitor", event.ConversationStarted(anonymous, store.StatusBot)},
		{"new lead, every field", event.LeadSaved(full, true)},
		{"updated lead, every field", event.LeadSaved(full, false)},
		{"new lead, only an email", event.LeadSaved(bare, true)},
		{"test", event.Test("hook", at)},
		{"handoff", event.Handoff(store.Conversation{ID: "conv_1", VisitorID: "v1"}, []store.Message{
			{ID: "q", Role: store.RoleVisitor, Text: "Can I talk to a human?", CreatedAt: at},
			{ID: "a", Role: store.RoleAssistant, Text: "I've asked a person.", CreatedAt: at}}, true, at)},
		{"handoff without visitor", event.Handoff(store.Conversation{ID: "conv_1"}, nil, false, at)},
		{"agent message", event.AgentWrote("conv_1", store.Message{ID: "m", Role: store.RoleAgent, Text: "Hi", Author: "Anna", CreatedAt: at})},
		{"agent message without author", event.AgentWrote("conv_1", store.Message{ID: "m", Role: store.RoleAgent, Text: "Hi", CreatedAt: at})},
		{"closed", event.Closed("conv_1", at)},
		{"answer rated, with a reason", event.AnswerRated(store.Rating{ConversationID: "conv_1", MessageID: "msg_1",
			VisitorID: "v1", Rating: store.RatingDown, Comment: "out of date", CreatedAt: at, UpdatedAt: at})},
		{"answer rated", event.AnswerRated(store.Rating{ConversationID: "conv_1", MessageID: "msg_1", VisitorID: "v1",
			Rating: store.RatingUp, CreatedAt: at, UpdatedAt: at})},
		{"conversation rated", event.ConversationRated(store.Satisfaction{ConversationID: "conv_1", VisitorID: "v1",
			Score: 5, Comment: "quick", CreatedAt: at, UpdatedAt: at.Add(time.Minute)})},
		{"erasure", event.SubjectErased(event.Erased{ErasureID: "era_1", Conversations: 2, Messages: 7, Leads: 1}, at)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoints := []store.Endpoint{{WebhookID: "hook", URL: "https://example.com/hook"}}
			events, err := event.Build("acme", store.Outbox{EventIDs: []string{"evt_1"},
				Subscribers: map[string][]store.Endpoint{tc.happened.Type: endpoints}}, tc.happened)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != 1 {
				t.Fatalf("got %d events, want 1", len(events))
			}
			var payload any
			if err := json.Unmarshal(events[0].Payload, &payload); err != nil {
				t.Fatal(err)
			}
			if err := schemas[tc.happened.Type].VisitJSON(payload); err != nil {
				t.Errorf("%s payload %s does not match the OpenAPI document: %v", tc.happened.Type, events[0].Payload, err)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	conv := event.ConversationStarted(store.Exchange{ConversationID: "c", Question: store.Message{CreatedAt: at}}, store.StatusBot)
	lead := event.LeadSaved(store.Lead{ID: "l", CreatedAt: at, UpdatedAt: at}, true)
	a := []store.Endpoint{{WebhookID: "a", URL: "https://a.example"}}
	b := []store.Endpoint{{WebhookID: "b", URL: "https://b.example"}}
	for _, tc := range []struct {
		name      string
		outbox    store.Outbox
		happened  []event.Happened
		wantIDs   []string
		wantTypes []string
		wantErr   bool
	}{
		{name: "no subscribers", outbox: store.Outbox{EventIDs: []string{"e1", "e2"}},
			happened: []event.Happened{conv, lead}},
		{name: "only subscribed types, IDs in order",
			outbox:   store.Outbox{EventIDs: []string{"e1", "e2"}, Subscribers: map[string][]store.Endpoint{event.LeadCreated: b}},
			happened: []event.Happened{conv, lead}, wantIDs: []string{"e1"}, wantTypes: []string{event.LeadCreated}},
		{name: "both",
			outbox: store.Outbox{EventIDs: []string{"e1", "e2"}, Subscribers: map[string][]store.Endpoint{
				event.ConversationCreated: a, event.LeadCreated: b}},
			happened: []event.Happened{conv, lead}, wantIDs: []string{"e1", "e2"},
			wantTypes: []string{event.ConversationCreated, event.LeadCreated}},
		{name: "too few IDs",
			outbox: store.Outbox{EventIDs: []string{"e1"}, Subscribers: map[string][]store.Endpoint{
				event.ConversationCreated: a, event.LeadCreated: b}},
			happened: []event.Happened{conv, lead}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, err := event.Build("m", tc.outbox, tc.happened...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			var gotIDs, gotTypes []string
			for _, e := range events {
				gotIDs, gotTypes = append(gotIDs, e.ID), append(gotTypes, e.Type)
				var body struct{ ID, Type string }
				if err := json.Unmarshal(e.Payload, &body); err != nil || body.ID != e.ID || body.Type != e.Type {
					t.Errorf("payload %s does not carry the event's ID %s and type %s", e.Payload, e.ID, e.Type)
				}
			}
			if strings.Join(gotIDs, ",") != strings.Join(tc.wantIDs, ",") || strings.Join(gotTypes, ",") != strings.Join(tc.wantTypes, ",") {
				t.Errorf("events %v %v, want %v %v", gotIDs, gotTypes, tc.wantIDs, tc.wantTypes)
			}
		})
	}
}
