package server

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/tenant"
)

// A script holding the publishable key cannot drain the merchant's conversations: new conversations are limited
// per client address and per visitor, with their own code and Retry-After; continuing a conversation, another
// address, another merchant and secret keys are not limited.
func TestConversationFloodFromOneAddress(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.MonthlyConversations = 1000 })
	pk := func(visitor string) []string {
		h := []string{"Origin", "https://alpha.example"}
		if visitor != "" {
			h = append(h, "X-Visitor-ID", visitor)
		}
		return h
	}
	// Each request comes as a new visitor, or as none: only the address limit holds them.
	first := e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, pk("v-old")...)
	if first.status != http.StatusOK {
		t.Fatalf("first conversation: %d %s", first.status, first.body)
	}
	old := first.json(t)["conversation_id"].(string)
	for i := range tenant.DefaultConversationsPerAddressPerHour - 1 {
		visitor := ""
		if i%2 == 0 {
			visitor = fmt.Sprint("v", i)
		}
		if r := e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, pk(visitor)...); r.status != http.StatusOK {
			t.Fatalf("conversation %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, pk("v-new")...)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeConversationRateLimited {
		t.Fatalf("conversation past the address limit: %d %s", r.status, r.body)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 3600 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// A conversation already started goes on.
	for range 3 {
		if r := e.chat(e.keys["alpha-pk"], `{"message": "more", "conversation_id": "`+old+`"}`, pk("v-old")...); r.status != http.StatusOK {
			t.Errorf("continuing a conversation: %d %s", r.status, r.body)
		}
	}
	// The merchant's own server is exempt, and so are other merchants.
	for range 3 {
		if r := e.chat(e.keys["alpha-sk"], `{"message": "hi"}`); r.status != http.StatusOK {
			t.Errorf("secret key: %d %s", r.status, r.body)
		}
		if r := e.chat(e.keys["beta-pk"], `{"message": "hi"}`, "Origin", "https://beta.example"); r.status != http.StatusOK {
			t.Errorf("another merchant: %d %s", r.status, r.body)
		}
	}
}

// An ingress missing from trustedProxies (the default) forwards every visitor from one address. One visitor
// behind it must not use up the address limit for everyone else, while a single client behind it, however many
// visitor IDs it makes up, is still held to the address limit; and a client that talks to the runtime directly
// and names a new forwarded address for each request is held to the proxy's ceiling. The runtime says so once in
// its log, and counts every such request.
func TestVisitorsBehindAnUntrustedProxyKeepTheirOwnLimits(t *testing.T) {
	const perAddress = 3
	e := newEnv(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) {
		b.Plan.ConversationsPerAddressPerHour = perAddress
		b.Plan.ConversationsPerVisitorPerHour = 1000
	})
	start := func(visitor, forwardedFor string) response {
		return e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, "Origin", "https://alpha.example",
			"X-Visitor-ID", visitor, "X-Forwarded-For", forwardedFor)
	}
	// A script behind the ingress, with a new visitor ID for each conversation: the address limit holds it.
	for i := range perAddress {
		if r := start(fmt.Sprint("script-", i), "203.0.113.9, 198.51.100.7"); r.status != http.StatusOK {
			t.Fatalf("conversation %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := start("script-last", "198.51.100.7"); r.status != http.StatusTooManyRequests || r.errorCode(t) != codeConversationRateLimited {
		t.Fatalf("a client behind the proxy past the address limit: %d %s", r.status, r.body)
	}
	// Every other visitor behind the same ingress still starts conversations.
	for i := range perAddress {
		if r := start(fmt.Sprint("visitor-", i), fmt.Sprint("198.51.100.", 100+i)); r.status != http.StatusOK {
			t.Errorf("another visitor behind the proxy: %d %s", r.status, r.body)
		}
	}
	// A client that names a new address each time gets no more than the proxy's ceiling, all told.
	admitted := 2 * perAddress
	for i := range proxyShare * perAddress {
		if r := start(fmt.Sprint("forger-", i), fmt.Sprint("192.0.2.", i)); r.status == http.StatusOK {
			admitted++
		}
	}
	if admitted != proxyShare*perAddress {
		t.Errorf("%d conversations through one untrusted proxy, want its ceiling of %d", admitted, proxyShare*perAddress)
	}
	if r := start("forger-last", "192.0.2.250"); r.status != http.StatusTooManyRequests {
		t.Errorf("past the proxy's ceiling: %d %s", r.status, r.body)
	}

	if !strings.Contains(e.logs.String(), "abuse limit reached for every client of a peer outside the trusted proxies") {
		t.Errorf("the proxy's ceiling reached is not a warning:\n%s", e.logs)
	}
	const advice = "list its network in the ChatRuntime's trustedProxies"
	if n := strings.Count(e.logs.String(), advice); n != 1 {
		t.Errorf("the advice to set trustedProxies is logged %d times, want once:\n%s", n, e.logs)
	}
	want := fmt.Sprint("parley_runtime_untrusted_forwarded_requests_total ", 2*perAddress+proxyShare*perAddress+2)
	if m := e.scrape(); !strings.Contains(m, want) {
		t.Errorf("metrics lack %q", want)
	}
}

// A client that forwards nothing, or comes through a trusted proxy, gets no advice and is not counted.
func TestNoForwardingNoticeWithoutAnUntrustedProxy(t *testing.T) {
	e := newEnv(t, func(c *envConfig) {
		c.server.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	for _, h := range [][]string{{"X-Visitor-ID", "v1"}, {"X-Visitor-ID", "v2", "X-Forwarded-For", "198.51.100.7"}} {
		if r := e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, append([]string{"Origin", "https://alpha.example"}, h...)...); r.status != http.StatusOK {
			t.Fatalf("conversation: %d %s", r.status, r.body)
		}
	}
	if strings.Contains(e.logs.String(), "trustedProxies") {
		t.Errorf("advice logged without an untrusted proxy:\n%s", e.logs)
	}
	if m := e.scrape(); !strings.Contains(m, "parley_runtime_untrusted_forwarded_requests_total 0") {
		t.Error("requests counted as forwarded by an untrusted proxy")
	}
}

func TestConversationFloodFromOneVisitor(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.ConversationsPerVisitorPerHour = 2 })
	for i := range 2 {
		if r := e.chatFrom("alpha", "v1", `{"message": "hi"}`); r.status != http.StatusOK {
			t.Fatalf("conversation %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := e.chatFrom("alpha", "v1", `{"message": "hi"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeConversationRateLimited || r.header.Get("Retry-After") == "" {
		t.Fatalf("past the visitor limit: %d %v %s", r.status, r.header, r.body)
	}
	if r := e.chatFrom("alpha", "v2", `{"message": "hi"}`); r.status != http.StatusOK {
		t.Errorf("another visitor: %d %s", r.status, r.body)
	}
}

// Behind a trusted proxy the client is the address it names in X-Forwarded-For; from anyone else the header is
// ignored, so that a client cannot pick its own address.
func TestClientAddress(t *testing.T) {
	s := &Server{clients: ratelimit.NewClients([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")})}
	tests := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"direct", "203.0.113.7:5000", nil, "203.0.113.7"},
		{"direct with a forged header", "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"through a trusted proxy", "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"through two trusted proxies", "10.1.2.3:5000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"a forged hop before the real client", "10.1.2.3:5000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"headers repeated", "10.1.2.3:5000", []string{"1.1.1.1", "198.51.100.1"}, "198.51.100.1"},
		{"garbage after the client", "10.1.2.3:5000", []string{"198.51.100.1, nonsense"}, "10.1.2.3"},
		{"no header from a proxy", "10.1.2.3:5000", nil, "10.1.2.3"},
		{"IPv6 through an IPv6 proxy", "[fd00::1]:5000", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv4-mapped", "[::ffff:203.0.113.7]:5000", nil, "203.0.113.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientAddress(r).String(); got != tt.want {
				t.Errorf("client %s, want %s", got, tt.want)
			}
		})
	}
	if a, b := addressKey(netip.MustParseAddr("2001:db8::1")), addressKey(netip.MustParseAddr("2001:db8::ffff:2")); a != b {
		t.Errorf("one /64 counts as %s and %s", a, b)
	}
}

// A visitor holding the page's publishable key cannot continue, and so read through the assistant's history or
// write into, a conversation another visitor started, even knowing its ID; nor one the merchant's server started
// without a visitor ID, nor one started without a visitor ID at all, which every holder of the key could name; nor
// name a new conversation, which would let a page claim an ID the merchant's server is yet to use. The browser is
// told there is no such conversation, and nothing is written. The merchant's server, with the secret key, names
// and continues any of the merchant's conversations.
func TestAVisitorContinuesOnlyItsOwnConversations(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		started := func(r response) string {
			t.Helper()
			if r.status != http.StatusOK {
				t.Fatalf("starting a conversation: %d %s", r.status, r.body)
			}
			return r.json(t)["conversation_id"].(string)
		}
		anonymous := func(body string) response {
			return e.chat(e.keys["alpha-pk"], body, "Origin", "https://alpha.example")
		}
		server := func(body string) response { return e.chat(e.keys["alpha-sk"], body) }
		mine := started(e.chatFrom("alpha", "v1", `{"message": "I am ana@example.com"}`))
		nobodys := started(anonymous(`{"message": "I am bo@example.com"}`))
		shops := started(server(`{"message": "call me on +1 555 010 2323", "conversation_id": "wa-15550102323"}`))
		asks := func(id string) string {
			return `{"message": "what is my email? email me at eve@example.com", "conversation_id": "` + id + `"}`
		}
		for _, tt := range []struct {
			name string
			send func() response
		}{
			{"another visitor", func() response { return e.chatFrom("alpha", "v2", asks(mine)) }},
			{"no visitor ID on a visitor's conversation", func() response { return anonymous(asks(mine)) }},
			{"no visitor ID on a conversation without one", func() response { return anonymous(asks(nobodys)) }},
			{"a visitor on a conversation without one", func() response { return e.chatFrom("alpha", "v2", asks(nobodys)) }},
			{"no visitor ID on the server's conversation", func() response { return anonymous(asks(shops)) }},
			{"a visitor on the server's conversation", func() response { return e.chatFrom("alpha", "v2", asks(shops)) }},
			{"a visitor naming a new conversation", func() response { return e.chatFrom("alpha", "v2", asks("wa-15550109999")) }},
			{"no visitor ID naming a new conversation", func() response { return anonymous(asks("wa-15550108888")) }},
		} {
			if r := tt.send(); r.status != http.StatusNotFound || r.errorCode(t) != codeNotFound {
				t.Errorf("%s: %d %s, want 404 not_found", tt.name, r.status, r.body)
			}
		}
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		for _, id := range []string{mine, nobodys, shops} {
			if c := e.do(http.MethodGet, "/api/v1/conversations/"+id, owner, "").json(t); len(c["messages"].([]any)) != 2 {
				t.Errorf("conversation %s has %d messages after the refused ones, want 2", id, len(c["messages"].([]any)))
			}
		}
		for _, id := range []string{"wa-15550109999", "wa-15550108888"} {
			if r := e.do(http.MethodGet, "/api/v1/conversations/"+id, owner, ""); r.status != http.StatusNotFound {
				t.Errorf("conversation %s a browser named: %d %s, want none", id, r.status, r.body)
			}
		}
		leads := e.do(http.MethodGet, "/api/v1/leads", owner, "").json(t)["data"].([]any)
		if len(leads) != 3 || strings.Contains(fmt.Sprint(leads), "eve@example.com") {
			t.Errorf("leads %v, want ana's, bo's and the server's customer's, and nothing of eve's", leads)
		}
		// The visitor goes on in its conversation, and the merchant's server in any, naming new ones too: an ID a
		// browser tried first is still the server's to start.
		if r := e.chatFrom("alpha", "v1", `{"message": "and my phone?", "conversation_id": "`+mine+`"}`); r.status != http.StatusOK {
			t.Errorf("v1 continuing its conversation: %d %s", r.status, r.body)
		}
		for _, id := range []string{mine, nobodys, shops, "wa-15550109999"} {
			if r := server(`{"message": "a note from the shop", "conversation_id": "` + id + `"}`); r.status != http.StatusOK {
				t.Errorf("the secret key continuing or naming %s: %d %s", id, r.status, r.body)
			}
		}
		if c := e.do(http.MethodGet, "/api/v1/conversations/wa-15550109999", owner, "").json(t); c["visitor_id"] != "" && c["visitor_id"] != nil {
			t.Errorf("the server's new conversation has visitor %v, want none", c["visitor_id"])
		}
	})
}

// A script holding the page's publishable key cannot flood the merchant with contact forms (each a lead and a
// lead.created webhook): a browser sends as many an hour from one address, and as one visitor, as the plan lets it
// start conversations, counted apart from them; the merchant's server is exempt.
func TestLeadFloodFromOneAddress(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) {
		b.Plan.ConversationsPerAddressPerHour, b.Plan.ConversationsPerVisitorPerHour = 3, 2
	})
	form := func(visitor string) response {
		return e.leadForm("alpha", visitor, `{"email": "spam@example.com", "consent": true}`)
	}
	for i, visitor := range []string{"v1", "v1"} {
		if r := form(visitor); r.status != http.StatusCreated {
			t.Fatalf("form %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := form("v1"); r.status != http.StatusTooManyRequests || r.errorCode(t) != codeRateLimited || r.header.Get("Retry-After") == "" {
		t.Errorf("past the visitor's limit: %d %v %s", r.status, r.header, r.body)
	}
	if r := form("v2"); r.status != http.StatusCreated {
		t.Fatalf("another visitor: %d %s", r.status, r.body)
	}
	if r := form("v3"); r.status != http.StatusTooManyRequests || r.errorCode(t) != codeRateLimited || !strings.Contains(string(r.body), "address") {
		t.Errorf("past the address's limit: %d %s", r.status, r.body)
	}
	// New conversations are counted apart, and the merchant's server is exempt.
	if r := e.chatFrom("alpha", "v4", `{"message": "hi"}`); r.status != http.StatusOK {
		t.Errorf("a conversation after the forms: %d %s", r.status, r.body)
	}
	if r := e.do(http.MethodPost, "/api/v1/leads", map[string]string{"X-API-Key": e.keys["alpha-sk"]}, `{"email": "crm@example.com", "consent": true}`); r.status != http.StatusCreated {
		t.Errorf("the secret key: %d %s", r.status, r.body)
	}
	leads := e.do(http.MethodGet, "/api/v1/leads", map[string]string{"Authorization": e.ownerOf("alpha")}, "").json(t)["data"].([]any)
	if len(leads) != 4 {
		t.Errorf("%d leads stored, want the 3 admitted forms and the server's", len(leads))
	}
}
