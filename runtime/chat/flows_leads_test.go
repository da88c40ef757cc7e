package chat_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func (h harness) leads(t *testing.T) {
	t.Run("FromChat", h.leadFromChat)
	t.Run("FromForm", h.leadFromForm)
	t.Run("List", h.listLeads)
	t.Run("Isolation", h.isolatedLeads)
	t.Run("Each", h.eachLead)
}

// withContact makes the exchange carry contact details found in its question.
func withContact(ex store.Exchange, c store.Contact) store.Exchange {
	ex.Contact = &c
	ex.LeadID = storetest.NewID("lead")
	return ex
}

func listAllLeads(t *testing.T, s store.Store, merchantID string, f store.LeadFilter) []store.Lead {
	t.Helper()
	var all []store.Lead
	for {
		list, next, err := s.ListLeads(t.Context(), merchantID, f)
		if err != nil {
			t.Fatalf("ListLeads: %v", err)
		}
		all = append(all, list...)
		if next == "" {
			return all
		}
		f.Cursor = next
	}
}

// leadFromChat keeps one lead per visitor and conversation, updated as the visitor gives more details.
func (h harness) leadFromChat(t *testing.T) {
	s := h.store(t)
	res := record(t, s, withContact(storetest.Exchange("m1", "c1", storetest.Base, "mail me at ana@example.com", "sure"),
		store.Contact{Email: "ana@example.com"}))
	if res.Lead == nil || res.Lead.Email != "ana@example.com" || res.Lead.Source != store.LeadFromChat ||
		res.Lead.ConversationID != "c1" || res.Lead.VisitorID != "visitor-c1" {
		t.Fatalf("lead after the first exchange = %+v", res.Lead)
	}
	first := *res.Lead
	if c, _ := storetest.GetConversation(t, s, "m1", "c1"); !c.HasLead {
		t.Error("the conversation is not marked as having a lead")
	}

	later := storetest.Base.Add(time.Minute)
	res = record(t, s, withContact(storetest.Exchange("m1", "c1", later, "or call +49 30 1234567", "ok"),
		store.Contact{Phone: "+49 30 1234567"}))
	if res.Lead == nil || res.Lead.ID != first.ID || res.Lead.Email != "ana@example.com" ||
		res.Lead.Phone != "+49 30 1234567" {
		t.Fatalf("lead after the second exchange = %+v, want %s updated with the phone", res.Lead, first.ID)
	}
	storetest.CheckTime(t, "updated_at", res.Lead.UpdatedAt, later)
	storetest.CheckTime(t, "created_at", res.Lead.CreatedAt, storetest.Base)

	leads := listAllLeads(t, s, "m1", store.LeadFilter{})
	if len(leads) != 1 || leads[0].Phone != "+49 30 1234567" || leads[0].Email != "ana@example.com" {
		t.Fatalf("leads = %+v, want one with email and phone", leads)
	}
	// Another conversation of the same visitor is another lead.
	ex := withContact(storetest.Exchange("m1", "c2", later, "ana@example.com", "thanks"), store.Contact{Email: "ana@example.com"})
	ex.VisitorID = "visitor-c1"
	record(t, s, ex)
	if n := len(listAllLeads(t, s, "m1", store.LeadFilter{})); n != 2 {
		t.Errorf("%d leads, want 2", n)
	}
}

// leadFromForm merges a form into the conversation's lead, and keeps a form without a conversation on its own.
func (h harness) leadFromForm(t *testing.T) {
	s := h.store(t)
	record(t, s, withContact(storetest.Exchange("m1", "c1", storetest.Base, "ana@example.com", "sure"), store.Contact{Email: "ana@example.com"}))
	res, err := chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "m1", ConversationID: "c1", VisitorID: "visitor-c1",
		ID: storetest.NewID("lead"), At: storetest.Base.Add(time.Minute),
		Contact: store.Contact{Name: "Ana", Phone: "+1 555 0100", Message: "call me", Consent: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Lead.Name != "Ana" || res.Lead.Email != "ana@example.com" || !res.Lead.Consent ||
		res.Lead.Source != store.LeadFromChat {
		t.Fatalf("SaveLead merged into the chat lead = %+v (created %v)", res.Lead, res.Created)
	}
	// Consent once given stays; empty fields keep what is stored.
	res, err = chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "m1", ConversationID: "c1", VisitorID: "visitor-c1",
		ID: storetest.NewID("lead"), At: storetest.Base.Add(2 * time.Minute), Contact: store.Contact{Email: "ana@example.org"}})
	if err != nil || !res.Lead.Consent || res.Lead.Name != "Ana" || res.Lead.Email != "ana@example.org" {
		t.Fatalf("second SaveLead = %+v, %v", res.Lead, err)
	}

	for i := range 2 {
		res, err := chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "m1", ID: storetest.NewID("lead"),
			At: storetest.Base.Add(time.Duration(3+i) * time.Minute), Contact: store.Contact{Email: "bo@example.com", Consent: true}})
		if err != nil || !res.Created || res.Lead.Source != store.LeadFromForm {
			t.Fatalf("form lead %d = %+v, %v", i, res, err)
		}
	}
	if n := len(listAllLeads(t, s, "m1", store.LeadFilter{})); n != 3 {
		t.Errorf("%d leads, want 3 (one merged, two without a conversation)", n)
	}
	_, err = chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "m1", ID: storetest.NewID("lead"), At: storetest.Base,
		Contact: store.Contact{Name: "No way to reach me"}})
	if err == nil {
		t.Error("a lead without email or phone was saved")
	}
}

func (h harness) listLeads(t *testing.T) {
	s := h.store(t)
	var want []string
	for i := range 7 {
		res, err := chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "m1", ID: storetest.NewID("lead"),
			At: storetest.Base.Add(time.Duration(i) * time.Hour), Contact: store.Contact{Email: "x@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{res.Lead.ID}, want...)
	}
	var got []string
	for _, l := range listAllLeads(t, s, "m1", store.LeadFilter{Limit: 3}) {
		got = append(got, l.ID)
	}
	storetest.CheckIDs(t, "leads newest first, by pages of 3", got, want)

	ranged := listAllLeads(t, s, "m1", store.LeadFilter{From: storetest.Base.Add(2 * time.Hour), To: storetest.Base.Add(5 * time.Hour)})
	if len(ranged) != 3 {
		t.Errorf("%d leads in [2h, 5h), want 3", len(ranged))
	}
	record(t, s, withContact(storetest.Exchange("m1", "c9", storetest.Base, "z@example.com", "ok"), store.Contact{Email: "z@example.com"}))
	if l := listAllLeads(t, s, "m1", store.LeadFilter{ConversationID: "c9"}); len(l) != 1 || l[0].Email != "z@example.com" {
		t.Errorf("leads of conversation c9 = %+v", l)
	}
	if o := storetest.OverviewOf(t, s, "m1", storetest.Base, storetest.Base.Add(3*time.Hour)); o.Leads != 4 {
		t.Errorf("overview leads = %d, want 4", o.Leads)
	}

	_, next, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, cursor := range []string{"garbage", next} {
		if cursor == "" {
			continue
		}
		_, _, err := s.ListLeads(t.Context(), "m1", store.LeadFilter{Cursor: cursor})
		storetest.WantErr(t, "a cursor not issued by the leads listing", err, store.ErrInvalidCursor)
	}
}

func (h harness) isolatedLeads(t *testing.T) {
	s := h.store(t)
	record(t, s, withContact(storetest.Exchange("A", "shared", storetest.Base, "a@example.com", "ok"), store.Contact{Email: "a@example.com"}))
	if l := listAllLeads(t, s, "B", store.LeadFilter{}); len(l) != 0 {
		t.Errorf("B lists A's leads: %+v", l)
	}
	// B's form naming A's conversation ID gets a lead of its own and leaves A's untouched.
	res, err := chat.SaveLead(t.Context(), s, store.LeadInput{MerchantID: "B", ConversationID: "shared", VisitorID: "visitor-shared",
		ID: storetest.NewID("lead"), At: storetest.Base, Contact: store.Contact{Email: "b@example.com"}})
	if err != nil || !res.Created {
		t.Fatalf("B's lead = %+v, %v", res, err)
	}
	if l := listAllLeads(t, s, "A", store.LeadFilter{}); len(l) != 1 || l[0].Email != "a@example.com" {
		t.Errorf("A's leads = %+v", l)
	}
	if o := storetest.OverviewOf(t, s, "B", storetest.Base.Add(-time.Hour), storetest.Base.Add(time.Hour)); o.Leads != 1 {
		t.Errorf("B's overview counts %d leads, want 1", o.Leads)
	}
}

// eachLead streams every lead of one merchant, newest first across its pages, with leads created in the same
// millisecond, and none of another merchant's; an error of fn ends it.
func (h harness) eachLead(t *testing.T) {
	s := h.store(t)
	const n = 1203 // pages of 500, and a short last one
	err := s.Write(t.Context(), func(tx store.Tx) error {
		for i := range n {
			at := storetest.Base.Add(time.Duration(i/7) * time.Millisecond) // seven leads a millisecond
			for _, m := range []string{"m1", "m2"} {
				if m == "m2" && i >= 3 {
					continue
				}
				err := tx.InsertLead(t.Context(), store.Lead{MerchantID: m, ID: fmt.Sprintf("lead-%s-%04d", m, i),
					Contact: store.Contact{Email: fmt.Sprintf("v%d@example.com", i)}, Source: store.LeadFromForm, CreatedAt: at, UpdatedAt: at})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	each := func(merchantID string, f store.LeadFilter) []string {
		var ids []string
		if err := s.EachLead(t.Context(), merchantID, f, func(l store.Lead) error {
			if l.MerchantID != merchantID {
				t.Fatalf("EachLead of %s gave a lead of %s", merchantID, l.MerchantID)
			}
			ids = append(ids, l.ID)
			return nil
		}); err != nil {
			t.Fatalf("EachLead: %v", err)
		}
		return ids
	}
	var want []string
	for _, l := range listAllLeads(t, s, "m1", store.LeadFilter{Limit: 100}) {
		want = append(want, l.ID)
	}
	if len(want) != n {
		t.Fatalf("%d leads listed, want %d", len(want), n)
	}
	storetest.CheckIDs(t, "every lead, newest first", each("m1", store.LeadFilter{}), want)
	storetest.CheckIDs(t, "another merchant's leads", each("m2", store.LeadFilter{}), []string{"lead-m2-0002", "lead-m2-0001", "lead-m2-0000"})
	if ids := each("m3", store.LeadFilter{}); len(ids) != 0 {
		t.Errorf("a merchant without leads: %v", ids)
	}
	if ids := each("m1", store.LeadFilter{From: storetest.Base.Add(100 * time.Millisecond), To: storetest.Base.Add(101 * time.Millisecond)}); len(ids) != 7 {
		t.Errorf("%d leads in one millisecond, want 7", len(ids))
	}
	stop := errors.New("the client went away")
	seen := 0
	if err := s.EachLead(t.Context(), "m1", store.LeadFilter{}, func(store.Lead) error {
		if seen++; seen == 600 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || seen != 600 {
		t.Errorf("EachLead after fn's error: %v, %d leads seen", err, seen)
	}
}
