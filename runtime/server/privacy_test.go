package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestPrivacyRequestsStayWithinTheMerchant: a data subject's export and erasure with one merchant's credentials
// find only that merchant's records, though another merchant holds the same visitor ID and e-mail address, and
// leave the other's untouched; a publishable key, which any web page holds, may do neither.
func TestPrivacyRequestsStayWithinTheMerchant(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{"alpha", "beta"} {
		if res := e.startFor(m, "v-ana", `{"message": "I am ana@example.com, marker `+m+`", "conversation_id": "c1"}`); res.status != http.StatusOK {
			t.Fatalf("chat: %d %s", res.status, res.body)
		}
	}
	body := `{"email": "ana@example.com", "visitor_id": "v-ana"}`
	betaOwner := map[string]string{"Authorization": e.ownerOf("beta")}
	betaExport := e.do(http.MethodPost, "/api/v1/privacy/export", betaOwner, body)
	if betaExport.status != http.StatusOK || strings.Contains(string(betaExport.body), "marker alpha") {
		t.Fatalf("beta's export: %d %s, want 200 without alpha's records", betaExport.status, betaExport.body)
	}

	for name, h := range map[string]map[string]string{
		"alpha's publishable key": {"X-API-Key": e.keys["alpha-pk"], "Origin": "https://alpha.example"},
		"no credentials":          nil,
	} {
		for _, path := range []string{"/api/v1/privacy/export", "/api/v1/privacy/erase"} {
			if res := e.do(http.MethodPost, path, h, body); res.status != http.StatusForbidden && res.status != http.StatusUnauthorized {
				t.Errorf("POST %s with %s: %d %s, want 401 or 403", path, name, res.status, res.body)
			}
		}
	}

	alphaKey := map[string]string{"X-API-Key": e.keys["alpha-sk"]}
	res := e.do(http.MethodPost, "/api/v1/privacy/erase", alphaKey, body)
	if res.status != http.StatusOK {
		t.Fatalf("alpha's erasure: %d %s", res.status, res.body)
	}
	got := res.json(t)
	if got["conversations"] != 1.0 || got["messages"] != 2.0 || got["leads"] != 1.0 || !strings.HasPrefix(got["id"].(string), "era_") {
		t.Errorf("alpha's erasure answered %v, want 1 conversation, 2 messages, 1 lead", got)
	}
	if res := e.do(http.MethodGet, "/api/v1/conversations/c1", map[string]string{"Authorization": e.ownerOf("alpha")}, ""); res.status != http.StatusNotFound {
		t.Errorf("alpha's conversation after the erasure: %d, want 404", res.status)
	}
	if again := e.do(http.MethodPost, "/api/v1/privacy/export", betaOwner, body); again.status != http.StatusOK ||
		!slices.Equal(withoutTime(t, again.body), withoutTime(t, betaExport.body)) {
		t.Errorf("beta's export changed with alpha's erasure:\n%s\nwant\n%s", again.body, betaExport.body)
	}
}

// withoutTime is an export without its time, as comparable lines.
func withoutTime(t *testing.T, body []byte) []string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("the export is not JSON: %v\n%s", err, body)
	}
	delete(doc, "exported_at")
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(out), ",")
}

func TestPrivacyExport(t *testing.T) {
	e := newEnv(t)
	if res := e.startFor("alpha", "v-ana", `{"message": "Do you ship to Norway?", "conversation_id": "c1"}`); res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	if res := e.startFor("alpha", "v-ana", `{"message": "Call me on +31 6 1234 5678", "conversation_id": "c2"}`); res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	if res := e.startFor("alpha", "v-bob", `{"message": "I am bob@example.com", "conversation_id": "c3"}`); res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	// By the phone number, written otherwise: the number's lead names v-ana, whose conversations are both hers.
	res := e.do(http.MethodPost, "/api/v1/privacy/export", owner, `{"phone": "0031 (6) 12345678"}`)
	if res.status != http.StatusOK {
		t.Fatalf("export: %d %s", res.status, res.body)
	}
	var doc struct {
		MerchantID    string `json:"merchant_id"`
		Conversations []struct {
			ID       string `json:"id"`
			Messages []struct {
				Text string `json:"text"`
			} `json:"messages"`
		} `json:"conversations"`
		Leads []struct {
			Phone string `json:"phone"`
		} `json:"leads"`
	}
	if err := json.Unmarshal(res.body, &doc); err != nil {
		t.Fatalf("the export is not JSON: %v\n%s", err, res.body)
	}
	// 0031 is not +31: the digits differ, so the number names nobody.
	if len(doc.Conversations) != 0 || len(doc.Leads) != 0 || doc.MerchantID != "alpha" {
		t.Errorf("export by another number: %s", res.body)
	}
	res = e.do(http.MethodPost, "/api/v1/privacy/export", owner, `{"phone": "+31 (6) 1234-5678"}`)
	if err := json.Unmarshal(res.body, &doc); err != nil {
		t.Fatalf("the export is not JSON: %v\n%s", err, res.body)
	}
	if len(doc.Conversations) != 2 || doc.Conversations[0].ID != "c1" || doc.Conversations[1].ID != "c2" ||
		len(doc.Conversations[0].Messages) != 2 || doc.Conversations[0].Messages[0].Text != "Do you ship to Norway?" ||
		len(doc.Leads) != 1 || doc.Leads[0].Phone == "" {
		t.Errorf("export by the number: %s", res.body)
	}
	if strings.Contains(string(res.body), "bob@example.com") {
		t.Errorf("the export holds another visitor's records: %s", res.body)
	}
}

func TestPrivacyRequestsRefuseBadInput(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	for _, path := range []string{"/api/v1/privacy/export", "/api/v1/privacy/erase"} {
		for _, tc := range []struct {
			body   string
			status int
			code   string
		}{
			{`{}`, http.StatusUnprocessableEntity, "validation_failed"},
			{`{"email": "", "phone": " "}`, http.StatusUnprocessableEntity, "validation_failed"},
			{`{"email": "not an address"}`, http.StatusUnprocessableEntity, "validation_failed"},
			{`{"phone": "12"}`, http.StatusUnprocessableEntity, "validation_failed"},
			{`{"visitor_id": "` + strings.Repeat("v", 200) + `"}`, http.StatusUnprocessableEntity, "validation_failed"},
			{`{"email": 5}`, http.StatusBadRequest, "invalid_request"},
			{`{"name": "Ana"}`, http.StatusBadRequest, "invalid_request"},
			{`[`, http.StatusBadRequest, "invalid_request"},
			{`{"visitor_id": "` + strings.Repeat("v", 5000) + `"}`, http.StatusRequestEntityTooLarge, "payload_too_large"},
		} {
			res := e.do(http.MethodPost, path, owner, tc.body)
			if res.status != tc.status || res.errorCode(t) != tc.code {
				t.Errorf("POST %s %.40s: %d %s, want %d %s", path, tc.body, res.status, res.body, tc.status, tc.code)
			}
		}
	}
}

// TestSubjectExportHoldsRatings: what a visitor said of the answers and of the conversation is theirs too, so a
// data subject's export carries it beside the messages.
func TestSubjectExportHoldsRatings(t *testing.T) {
	e := newEnv(t)
	_, answer := e.answerID("alpha", "v-ana", "c1")
	if res := e.rate("alpha", "v-ana", `{"message_id": "`+answer+`", "rating": "down", "comment": "RATINGMARKER"}`); res.status != http.StatusOK {
		t.Fatalf("rating: %d %s", res.status, res.body)
	}
	if res := e.rateConversation("alpha", "v-ana", `{"conversation_id": "c1", "score": 2, "comment": "SATISFACTIONMARKER"}`); res.status != http.StatusOK {
		t.Fatalf("satisfaction: %d %s", res.status, res.body)
	}
	res := e.do(http.MethodPost, "/api/v1/privacy/export", map[string]string{"X-API-Key": e.keys["alpha-sk"]}, `{"visitor_id": "v-ana"}`)
	if res.status != http.StatusOK || !strings.Contains(string(res.body), "RATINGMARKER") || !strings.Contains(string(res.body), "SATISFACTIONMARKER") {
		t.Errorf("the export: %d %s, want the answer's and the conversation's ratings", res.status, res.body)
	}
}
