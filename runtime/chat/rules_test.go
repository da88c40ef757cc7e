package chat

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

func TestMergeContact(t *testing.T) {
	stored := store.Lead{ID: "l", Contact: store.Contact{Name: "Ada", Email: "ada@example.com"}}
	for _, tc := range []struct {
		name        string
		in          store.Contact
		want        store.Contact
		wantChanged bool
	}{
		{"nothing new", store.Contact{Email: "ada@example.com"}, stored.Contact, false},
		{"empty fields keep the stored ones", store.Contact{}, stored.Contact, false},
		{"a phone is added", store.Contact{Phone: "+4412345678"},
			store.Contact{Name: "Ada", Email: "ada@example.com", Phone: "+4412345678"}, true},
		{"a given field replaces", store.Contact{Email: "ada@new.example"},
			store.Contact{Name: "Ada", Email: "ada@new.example"}, true},
		{"consent is kept once given", store.Contact{Consent: true},
			store.Contact{Name: "Ada", Email: "ada@example.com", Consent: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := mergeContact(stored, tc.in)
			if got.Contact != tc.want || changed != tc.wantChanged || got.ID != "l" {
				t.Errorf("mergeContact = %+v, %v; want %+v, %v", got.Contact, changed, tc.want, tc.wantChanged)
			}
		})
	}
	withConsent := stored
	withConsent.Consent = true
	if got, changed := mergeContact(withConsent, store.Contact{Consent: false}); !got.Consent || changed {
		t.Errorf("a form without consent withdrew it: %+v, changed %v", got.Contact, changed)
	}
}

func TestValidateExchange(t *testing.T) {
	ok := store.Exchange{MerchantID: "m", ConversationID: "c", Question: store.Message{ID: "q"}, Answer: store.Message{ID: "a"}}
	for _, tc := range []struct {
		name    string
		change  func(*store.Exchange)
		wantErr string
	}{
		{"valid", func(*store.Exchange) {}, ""},
		{"no merchant", func(ex *store.Exchange) { ex.MerchantID = "" }, "merchant ID"},
		{"no conversation", func(ex *store.Exchange) { ex.ConversationID = "" }, "conversation ID"},
		{"no answer ID", func(ex *store.Exchange) { ex.Answer.ID = "" }, "message ID"},
		{"shared message ID", func(ex *store.Exchange) { ex.Answer.ID = "q" }, "share the ID"},
		{"negative limit", func(ex *store.Exchange) { ex.MonthlyLimit = -1 }, "negative"},
		{"contact without lead ID", func(ex *store.Exchange) { ex.Contact = &store.Contact{Email: "a@b.example"} }, "lead ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := ok
			tc.change(&ex)
			err := validateExchange(ex)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("validateExchange = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestCitedIDs(t *testing.T) {
	got := citedIDs([]store.Source{{KnowledgeID: "b"}, {KnowledgeID: ""}, {KnowledgeID: "a"}, {KnowledgeID: "b"}})
	if want := []string{"b", "a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("citedIDs = %v, want %v", got, want)
	}
}

func TestLater(t *testing.T) {
	a := time.Date(2026, 3, 1, 12, 0, 0, 999_999, time.UTC)
	b := a.Add(time.Second)
	if got := later(a, b); !got.Equal(b.Truncate(time.Millisecond)) {
		t.Errorf("later(a, b) = %v, want %v", got, b)
	}
	if got := later(b, a); !got.Equal(b.Truncate(time.Millisecond)) {
		t.Errorf("later(b, a) = %v, want %v", got, b)
	}
}

func TestSubscribers(t *testing.T) {
	hooks := []tenant.Webhook{
		{ID: "crm", URL: "https://crm.example/hook", Events: []tenant.Event{event.LeadCreated, event.LeadUpdated}},
		{ID: "all", URL: "https://all.example/hook", Events: []tenant.Event{event.ConversationCreated, event.LeadCreated}},
	}
	for _, tc := range []struct {
		name   string
		bundle tenant.Bundle
		want   map[string][]store.Endpoint
	}{
		{"no webhooks on the plan", tenant.Bundle{Webhooks: hooks}, nil},
		{"no webhooks declared", tenant.Bundle{Plan: tenant.Plan{Webhooks: true}}, nil},
		{"each event type to its subscribers", tenant.Bundle{Plan: tenant.Plan{Webhooks: true}, Webhooks: hooks},
			map[string][]store.Endpoint{
				event.ConversationCreated: {{WebhookID: "all", URL: "https://all.example/hook"}},
				event.LeadCreated:         {{WebhookID: "crm", URL: "https://crm.example/hook"}, {WebhookID: "all", URL: "https://all.example/hook"}},
				event.LeadUpdated:         {{WebhookID: "crm", URL: "https://crm.example/hook"}},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Subscribers(&tc.bundle); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Subscribers = %v, want %v", got, tc.want)
			}
			o := Route(&tc.bundle)
			if tc.want == nil && (len(o.EventIDs) != 0 || o.Subscribers != nil) {
				t.Errorf("Route gave %+v for a merchant whose events go nowhere", o)
			}
			if tc.want != nil && (len(o.EventIDs) != eventsPerWrite || o.EventIDs[0] == o.EventIDs[1]) {
				t.Errorf("Route gave event IDs %v, want %d distinct ones", o.EventIDs, eventsPerWrite)
			}
		})
	}
}

func TestErasureDue(t *testing.T) {
	retired := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	month := 720 * time.Hour
	for _, tc := range []struct {
		name      string
		retiredAt time.Time
		retention time.Duration
		served    bool
		now       time.Time
		want      bool
	}{
		{"within the retention", retired, month, false, retired.Add(month - time.Second), false},
		{"the retention just passed", retired, month, false, retired.Add(month), true},
		{"long after", retired, month, false, retired.Add(10 * month), true},
		{"served again", retired, month, true, retired.Add(10 * month), false},
		{"no retention", retired, 0, false, retired, true},
		{"no retention, served again", retired, 0, true, retired, false},
		{"a retirement without a time", time.Time{}, 0, false, retired, false},
		{"retired in the future (a clock behind)", retired, 0, false, retired.Add(-time.Minute), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ErasureDue(tc.retiredAt, tc.retention, tc.served, tc.now); got != tc.want {
				t.Errorf("ErasureDue = %v, want %v", got, tc.want)
			}
		})
	}
}
