package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// An owner of alpha sees its own misses alone in the review queue, and cannot list a question under beta's item.
func TestReviewQueueIsTheMerchantsOwn(t *testing.T) {
	e := newEnv(t)
	e.chat(t, "beta", "Can I pay with beta-secret-voucher?")
	e.chat(t, "alpha", "Can I pay with bitcoin?")

	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	body := alpha.get("/dashboard/review").Body
	if strings.Contains(body, "beta-secret-voucher") || !strings.Contains(body, "Can I pay with bitcoin?") ||
		!strings.Contains(body, `href="/dashboard/review.csv"`) {
		t.Errorf("alpha's review queue:\n%s", body)
	}
	// The page's download is the same queue as a spreadsheet, alpha's alone.
	csv := alpha.get("/dashboard/review.csv")
	if csv.StatusCode != http.StatusOK || !strings.HasPrefix(csv.Header.Get("Content-Type"), "text/csv") ||
		!strings.HasPrefix(csv.Body, "question,asked,unanswered,thumbs_down,low_confidence,") ||
		!strings.Contains(csv.Body, "Can I pay with bitcoin?") || strings.Contains(csv.Body, "beta-secret-voucher") {
		t.Errorf("alpha's review CSV: %d %q\n%s", csv.StatusCode, csv.Header.Get("Content-Type"), csv.Body)
	}
	res := alpha.post("/dashboard/review/fix", url.Values{"csrf": {alpha.csrf()}, "questions": {"can i pay with bitcoin"},
		"knowledge_id": {"kn_beta_1"}, "list_question": {"Can I pay with bitcoin?"}})
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("listing under beta's item as alpha: %d", res.StatusCode)
	}
	if item, err := e.store.GetKnowledge(t.Context(), "beta", "kn_beta_1"); err != nil || len(item.Questions) != 0 {
		t.Errorf("beta's item after alpha's attempt: %v, %v", item.Questions, err)
	}
	// Without the CSRF token nothing is recorded; with it, the group leaves the queue.
	if res := alpha.post("/dashboard/review/fix", url.Values{"questions": {"can i pay with bitcoin"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a fix without the CSRF token: %d", res.StatusCode)
	}
	if !strings.Contains(alpha.get("/dashboard/review").Body, "Can I pay with bitcoin?") {
		t.Error("the group left the queue without a fix")
	}
	res = alpha.post("/dashboard/review/fix", url.Values{"csrf": {alpha.csrf()}, "questions": {"can i pay with bitcoin"}})
	if body := alpha.resolve(res); strings.Contains(alpha.get("/dashboard/review").Body, "Can I pay with bitcoin?") {
		t.Errorf("the group is still in the queue after it was dealt with: %s", body)
	}
}
