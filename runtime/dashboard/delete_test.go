package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
)

// An owner deletes a conversation and a lead from the dashboard, with the form's CSRF token only, and never
// another merchant's.
func TestDeleteConversationAndLead(t *testing.T) {
	e := newEnv(t)
	_, alphaConv := e.chat(t, "alpha", "Do you ship to Canada? Write to ana@example.com")
	_, betaConv := e.chat(t, "beta", "Do you ship to Canada? Write to bea@example.com")
	leadOf := func(merchant, conv string) string {
		t.Helper()
		leads, _, err := e.store.ListLeads(t.Context(), merchant, store.LeadFilter{ConversationID: conv})
		if err != nil || len(leads) != 1 {
			t.Fatalf("%s's leads of %s: %v, %v", merchant, conv, leads, err)
		}
		return leads[0].ID
	}
	alphaLead, betaLead := leadOf("alpha", alphaConv), leadOf("beta", betaConv)
	exists := func(merchant, conv string) bool {
		t.Helper()
		ok, err := e.store.ConversationExists(t.Context(), merchant, conv)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	token := alpha.csrf()
	page := alpha.get("/dashboard/conversations/" + alphaConv).Body
	if !strings.Contains(page, `action="/dashboard/conversations/`+alphaConv+`/delete"`) || !strings.Contains(page, "data-confirm=") {
		t.Error("the conversation page offers no deletion with a confirmation")
	}
	if !strings.Contains(alpha.get("/dashboard/leads").Body, `action="/dashboard/leads/`+alphaLead+`/delete"`) {
		t.Error("the leads page offers no deletion")
	}

	// Another merchant's conversation and lead are not found, and stay.
	for _, path := range []string{"/dashboard/conversations/" + betaConv + "/delete", "/dashboard/leads/" + betaLead + "/delete"} {
		if res := alpha.post(path, url.Values{"csrf": {token}}); res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s as alpha: %d, want 404", path, res.StatusCode)
		}
	}
	if !exists("beta", betaConv) || leadOf("beta", betaConv) != betaLead {
		t.Error("beta's conversation or lead was deleted by alpha's owner")
	}
	// Without the form's token nothing is deleted.
	if res := alpha.post("/dashboard/conversations/"+alphaConv+"/delete", url.Values{}); res.StatusCode != http.StatusForbidden || !exists("alpha", alphaConv) {
		t.Errorf("a deletion without the CSRF token: %d", res.StatusCode)
	}

	if res := alpha.post("/dashboard/leads/"+alphaLead+"/delete", url.Values{"csrf": {token}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("deleting the lead: %d", res.StatusCode)
	}
	if leads, _, _ := e.store.ListLeads(t.Context(), "alpha", store.LeadFilter{}); len(leads) != 0 {
		t.Errorf("alpha's leads after the deletion: %v", leads)
	}
	if res := alpha.post("/dashboard/conversations/"+alphaConv+"/delete", url.Values{"csrf": {token}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("deleting the conversation: %d", res.StatusCode)
	}
	if exists("alpha", alphaConv) {
		t.Error("the conversation is still there")
	}
	if body := alpha.get("/dashboard/conversations?ok=conversation-deleted").Body; !strings.Contains(body, "The conversation was deleted") {
		t.Error("no notice after the deletion")
	}
	if res := alpha.get("/dashboard/conversations/" + alphaConv); res.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted conversation's page: %d", res.StatusCode)
	}
}
