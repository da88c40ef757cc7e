package server

import (
	"net/http"
	"strings"
	"testing"
)

// leadIDs lists the IDs of the merchant's leads, as its owner reads them.
func (e *env) leadIDs(merchant string) []string {
	e.t.Helper()
	list := e.do(http.MethodGet, "/api/v1/leads", map[string]string{"Authorization": e.ownerOf(merchant)}, "").json(e.t)
	var ids []string
	for _, l := range list["data"].([]any) {
		ids = append(ids, l.(map[string]any)["id"].(string))
	}
	return ids
}

// TestDeleteAnotherMerchantsRecords: an owner naming another merchant's conversation or lead gets 404, the same
// as for one that does not exist, and nothing of the other merchant is deleted; a key holder cannot delete at all.
func TestDeleteAnotherMerchantsRecords(t *testing.T) {
	e := newEnv(t)
	if res := e.startFor("alpha", "v1", `{"message": "I am ana@example.com", "conversation_id": "only-alpha"}`); res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	alphaLeads := e.leadIDs("alpha")
	if len(alphaLeads) != 1 {
		t.Fatalf("alpha has %d leads, want 1", len(alphaLeads))
	}
	beta := map[string]string{"Authorization": e.ownerOf("beta")}
	for _, path := range []string{"/api/v1/conversations/only-alpha", "/api/v1/leads/" + alphaLeads[0]} {
		res := e.do(http.MethodDelete, path, beta, "")
		if res.status != http.StatusNotFound || res.errorCode(t) != "not_found" {
			t.Errorf("beta's owner DELETE %s: %d %s, want 404 not_found", path, res.status, res.body)
		}
		for name, h := range map[string]map[string]string{
			"no credentials":     nil,
			"alpha's secret key": {"X-API-Key": e.keys["alpha-sk"]},
		} {
			if res := e.do(http.MethodDelete, path, h, ""); res.status != http.StatusUnauthorized {
				t.Errorf("DELETE %s with %s: %d, want 401", path, name, res.status)
			}
		}
	}
	alpha := map[string]string{"Authorization": e.ownerOf("alpha")}
	if res := e.do(http.MethodGet, "/api/v1/conversations/only-alpha", alpha, ""); res.status != http.StatusOK {
		t.Errorf("alpha's conversation after the attempts: %d %s", res.status, res.body)
	}
	if got := e.leadIDs("alpha"); len(got) != 1 {
		t.Errorf("alpha's leads after the attempts: %v", got)
	}
}

func TestDeleteConversation(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{"alpha", "beta"} {
		if res := e.startFor(m, "v1", `{"message": "Call me at ana@example.com", "conversation_id": "c1"}`); res.status != http.StatusOK {
			t.Fatalf("chat: %d %s", res.status, res.body)
		}
	}
	if res := e.startFor("alpha", "v2", `{"message": "Do you ship to Norway?", "conversation_id": "c2"}`); res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	alpha := map[string]string{"Authorization": e.ownerOf("alpha")}
	res := e.do(http.MethodDelete, "/api/v1/conversations/c1", alpha, "")
	if res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Fatalf("DELETE: %d %s, want 204 and no body", res.status, res.body)
	}
	if res := e.do(http.MethodGet, "/api/v1/conversations/c1", alpha, ""); res.status != http.StatusNotFound {
		t.Errorf("GET after DELETE: %d, want 404", res.status)
	}
	if got := e.leadIDs("alpha"); len(got) != 0 {
		t.Errorf("the conversation's leads are left: %v", got)
	}
	if res := e.do(http.MethodGet, "/api/v1/conversations/c2", alpha, ""); res.status != http.StatusOK {
		t.Errorf("another conversation of alpha: %d", res.status)
	}
	if res := e.do(http.MethodGet, "/api/v1/conversations/c1", map[string]string{"Authorization": e.ownerOf("beta")}, ""); res.status != http.StatusOK {
		t.Errorf("beta's conversation of the same ID: %d, want 200", res.status)
	}
	if res := e.do(http.MethodDelete, "/api/v1/conversations/c1", alpha, ""); res.status != http.StatusNotFound || res.errorCode(t) != "not_found" {
		t.Errorf("DELETE again: %d %s, want 404", res.status, res.body)
	}
	for _, bad := range []string{"/api/v1/conversations/" + strings.Repeat("x", 200), "/api/v1/conversations/%FF"} {
		if res := e.do(http.MethodDelete, bad, alpha, ""); res.status != http.StatusNotFound || res.errorCode(t) != "not_found" {
			t.Errorf("DELETE %s: %d %s, want 404", bad, res.status, res.body)
		}
	}
}

func TestDeleteLead(t *testing.T) {
	e := newEnv(t)
	if res := e.startFor("alpha", "v1", `{"message": "Call me at ana@example.com", "conversation_id": "c1"}`); res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	ids := e.leadIDs("alpha")
	if len(ids) != 1 {
		t.Fatalf("%d leads, want 1", len(ids))
	}
	alpha := map[string]string{"Authorization": e.ownerOf("alpha")}
	if res := e.do(http.MethodDelete, "/api/v1/leads/"+ids[0], alpha, ""); res.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s, want 204", res.status, res.body)
	}
	if got := e.leadIDs("alpha"); len(got) != 0 {
		t.Errorf("leads after DELETE: %v", got)
	}
	conv := e.do(http.MethodGet, "/api/v1/conversations/c1", alpha, "").json(t)
	if conv["has_lead"] != false || len(conv["messages"].([]any)) != 2 {
		t.Errorf("the lead's conversation: has_lead %v, %d messages; want false and its 2 messages",
			conv["has_lead"], len(conv["messages"].([]any)))
	}
	for _, path := range []string{"/api/v1/leads/" + ids[0], "/api/v1/leads/%FF", "/api/v1/leads/" + strings.Repeat("x", 200)} {
		if res := e.do(http.MethodDelete, path, alpha, ""); res.status != http.StatusNotFound || res.errorCode(t) != "not_found" {
			t.Errorf("DELETE %s: %d %s, want 404", path, res.status, res.body)
		}
	}
}
