package chat_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// runSubject is the conformance test of a data subject's requests, store.Reader.SubjectRecords and
// chat.EraseSubject: a subject is found by its visitor ID, its e-mail address whatever its case, and its phone
// number whatever its separators, with the conversations and leads of the visitors its leads name; another
// merchant's records of the same visitor ID and e-mail address are never found nor touched; and after an erasure
// no row of any table holds anything of the subject's records (so that a table added later and left out of the
// store's map of personal data fails it), while the privacy.erased event carries counts only. open returns a new,
// empty store and the dump of its rows.
func runSubject(t *testing.T, open func(t *testing.T) (store.Store, dump)) {
	const merchant, other = "shop", "intruder"
	s, dump := openCiting(t, open, merchant, other)
	ctx := t.Context()
	claimAt := storetest.Base

	// conversation records a conversation of the visitor whose answer cites k1, with a lead when contact is set,
	// and events for both, one of whose deliveries was attempted. It returns the strings only its data holds.
	conversation := func(merchantID, id, visitorID, marker string, contact *store.Contact, at time.Time) []string {
		t.Helper()
		ex := storetest.Citing(storetest.Exchange(merchantID, id, at, "question "+marker, "answer "+marker), "k1")
		ex.VisitorID = visitorID
		if contact != nil {
			ex = withContact(ex, *contact)
		}
		ex.Outbox = subscribed(hookA)
		record(t, s, ex)
		claimAt = claimAt.Add(time.Hour)
		held := append(attempted(t, s, merchantID, id, claimAt), id, marker, ex.Question.ID, ex.Answer.ID)
		if contact != nil {
			held = append(held, ex.LeadID)
		}
		return held
	}
	formLead := func(merchantID, visitorID string, c store.Contact, at time.Time) []string {
		t.Helper()
		id := storetest.NewID("lead")
		in := store.LeadInput{MerchantID: merchantID, VisitorID: visitorID, ID: id, At: at, Outbox: subscribed(hookA), Contact: c}
		if _, err := chat.SaveLead(ctx, s, in); err != nil {
			t.Fatal(err)
		}
		return []string{id, c.Message}
	}

	// Ana chatted twice as v-ana, leaving her address in the second conversation; later, on another device
	// (v-ana-phone), she sent the contact form with the address in capitals and chatted once more.
	anaMail := store.Contact{Email: "ana.subject@example.com"}
	ana1 := conversation(merchant, "conv-ana-1", "v-ana", "markersubject01", nil, storetest.Base)
	ana2 := conversation(merchant, "conv-ana-2", "v-ana", "markersubject02", &anaMail, storetest.Base.Add(time.Minute))
	anaForm := formLead(merchant, "v-ana-phone", store.Contact{Email: "ANA.Subject@example.com", Message: "markersubject03 call me",
		Consent: true}, storetest.Base.Add(2*time.Minute))
	ana3 := conversation(merchant, "conv-ana-3", "v-ana-phone", "markersubject04", nil, storetest.Base.Add(3*time.Minute))
	// Piet is known by his phone number only, written with other separators than he gave it.
	pietPhone := store.Contact{Phone: "+31 6 1234 5678"}
	piet := conversation(merchant, "conv-piet", "v-piet", "markerphone005", &pietPhone, storetest.Base.Add(4*time.Minute))
	bob := conversation(merchant, "conv-bob", "v-bob", "markerkeptbob06", &store.Contact{Email: "bob@example.com"}, storetest.Base.Add(5*time.Minute))
	// The intruder has a visitor of the same ID and a lead of the same address.
	intruder := conversation(other, "conv-ana-1", "v-ana", "markerintruder07", &anaMail, storetest.Base)
	wantOther := dump(t, other)

	ids := func(d store.SubjectData) (conversations, leads []string) {
		for _, c := range d.Conversations {
			conversations = append(conversations, c.ID)
		}
		for _, l := range d.Leads {
			leads = append(leads, l.ID)
		}
		return conversations, leads
	}
	records := func(merchantID string, subject store.Subject) store.SubjectData {
		t.Helper()
		d, err := s.SubjectRecords(ctx, merchantID, subject)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	t.Run("FoundByEachIdentifier", func(t *testing.T) {
		anaConversations := []string{"conv-ana-1", "conv-ana-2", "conv-ana-3"}
		anaLeads := []string{ana2[len(ana2)-1], anaForm[0]}
		for _, tc := range []struct {
			name                string
			subject             store.Subject
			conversations, lead []string
		}{
			// The visitor's lead names the address, which the form's lead names too: its visitor is hers.
			{"VisitorID", store.Subject{VisitorID: "v-ana"}, anaConversations, anaLeads},
			{"EmailOfAnotherCase", store.Subject{Email: "Ana.Subject@EXAMPLE.com"}, anaConversations, anaLeads},
			{"PhoneWithOtherSeparators", store.Subject{Phone: "+31 (6) 1234-5678"}, []string{"conv-piet"}, []string{piet[len(piet)-1]}},
			{"Nobody", store.Subject{Email: "nobody@example.com", VisitorID: "v-nobody"}, nil, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				conversations, leads := ids(records(merchant, tc.subject))
				if !slices.Equal(conversations, tc.conversations) {
					t.Errorf("conversations %v, want %v", conversations, tc.conversations)
				}
				if !slices.Equal(leads, tc.lead) {
					t.Errorf("leads %v, want %v", leads, tc.lead)
				}
			})
		}
		conversations, leads := ids(records(other, store.Subject{Email: anaMail.Email}))
		if !slices.Equal(conversations, []string{"conv-ana-1"}) || len(leads) != 1 || leads[0] != intruder[len(intruder)-1] {
			t.Errorf("the other merchant's subject has conversations %v and leads %v, want its own only", conversations, leads)
		}
	})

	t.Run("Erase", func(t *testing.T) {
		o := subscribed(hookA)
		o.Subscribers[event.PrivacyErased] = []store.Endpoint{hookA}
		e, deliveries, err := chat.EraseSubject(ctx, s, merchant, store.Subject{Email: anaMail.Email}, "era_test", o, storetest.Base.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if e.Conversations != 3 || e.Messages != 6 || e.Leads != 2 || deliveries != 1 {
			t.Errorf("erased %+v with %d deliveries, want 3 conversations, 6 messages, 2 leads and 1 delivery", e, deliveries)
		}
		// 3 conversations, 6 messages, 2 leads; their events: 3 conversations', 2 leads'; a delivery of each and
		// 3 attempts.
		if e.Rows != 3+6+2+5+5+3 {
			t.Errorf("erased %d rows, want %d", e.Rows, 3+6+2+5+5+3)
		}
		rows := dump(t, merchant)
		checkGone(t, rows, slices.Concat(ana1, ana2, anaForm, ana3, []string{"ana.subject@example.com", "ANA.Subject@example.com", "v-ana", "v-ana-phone"}))
		checkHeld(t, rows, slices.Concat(piet, bob))
		if got := dump(t, other); !slices.Equal(got, wantOther) {
			t.Errorf("another merchant's rows changed:\n%v\nwant\n%v", got, wantOther)
		}

		erased := listAllDeliveries(t, s, merchant, store.DeliveryFilter{EventType: event.PrivacyErased})
		if len(erased) != 1 {
			t.Fatalf("%d privacy.erased deliveries, want 1", len(erased))
		}
		var payload struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(erased[0].Payload, &payload); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"erasure_id": "era_test", "conversations": 3.0, "messages": 6.0, "leads": 2.0}
		if len(payload.Data) != len(want) {
			t.Errorf("privacy.erased carries %v, want %v", payload.Data, want)
		}
		for k, v := range want {
			if payload.Data[k] != v {
				t.Errorf("privacy.erased %s = %v, want %v", k, payload.Data[k], v)
			}
		}

		again, _, err := chat.EraseSubject(ctx, s, merchant, store.Subject{VisitorID: "v-ana"}, "era_again", store.Outbox{}, storetest.Base.Add(time.Hour))
		if err != nil || again.Conversations+again.Messages+again.Leads != 0 || again.Rows != 0 {
			t.Errorf("erasing again: %+v, %v; want nothing erased", again, err)
		}
	})

	checkHeld(t, dump(t, other), intruder)
}
