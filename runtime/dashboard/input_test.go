package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The dashboard keeps the API's rules for a request's address, on both stores: NUL or invalid UTF-8 in a query
// parameter or an {id}, or a malformed escape, is refused with 400 and a page that says so, never a 500 from
// PostgreSQL nor a filter silently dropped; and a change so addressed changes nothing.
func TestDashboardRefusesUnreadableAddresses(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		c := newClient(t, e.url)
		c.signIn("alpha@owners.example")
		token := c.csrf()
		for _, path := range []string{
			"/dashboard/conversations?q=a%00b",
			"/dashboard/conversations?q=%ff",
			"/dashboard/knowledge?q=%zz",
			"/dashboard/knowledge?q=ok&%00=x",
			"/dashboard/leads?cursor=%ff",
			"/dashboard/webhooks?cursor=a%00",
			"/dashboard/conversations/cv_%00",
			"/dashboard/conversations/%ff%fe",
			"/dashboard/knowledge/kn_alpha_0%00",
			"/dashboard/knowledge/%c3%28",
		} {
			if res := c.get(path); res.StatusCode != http.StatusBadRequest || !strings.Contains(res.Body, "cannot be read") {
				t.Errorf("GET %s: %d, want 400 saying the address cannot be read", path, res.StatusCode)
			}
		}
		for _, path := range []string{
			"/dashboard/knowledge/kn_alpha_0%00/delete",
			"/dashboard/knowledge/%ff/delete",
			"/dashboard/keys/%00/revoke",
			"/dashboard/webhooks/%ff/replay",
			"/dashboard/knowledge/kn_alpha_0/delete?x=%zz",
		} {
			if res := c.post(path, url.Values{"csrf": {token}}); res.StatusCode != http.StatusBadRequest {
				t.Errorf("POST %s: %d, want 400", path, res.StatusCode)
			}
		}
		if n := e.knowledgeCount(t, "alpha"); n != 2 {
			t.Errorf("alpha has %d items, want its 2", n)
		}
		// The rules refuse what is unreadable, not what is unusual: text of any script, and escaped separators.
		for _, path := range []string{"/dashboard/conversations?q=%C3%BCber+%26+%E2%82%AC", "/dashboard/knowledge?q=Shipping%2C+returns"} {
			if res := c.get(path); res.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %d, want 200", path, res.StatusCode)
			}
		}
	})
}
