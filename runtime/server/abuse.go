package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/tenant"
)

// abuseWindow is the period the plans' abuse limits count new conversations in.
const abuseWindow = time.Hour

// withCaller keeps the key caller in the request's requestInfo for the handlers behind s.visitor; a request
// that did not pass through instrument gets a requestInfo of its own.
func withCaller(r *http.Request, c keyCaller) *http.Request {
	i := info(r)
	if i == nil {
		i = &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, i))
	}
	i.caller, i.hasCaller = c, true
	return r
}

// callerOf is the key caller s.visitor authenticated.
func callerOf(r *http.Request) (keyCaller, bool) {
	if i := info(r); i != nil && i.hasCaller {
		return i.caller, true
	}
	return keyCaller{}, false
}

// admitConversation applies the plan's abuse limits before a publishable key starts a conversation (the chat
// handler hands it to chat as Question.AdmitNew, which asks once it has found the conversation new): so many new
// conversations per client address and per visitor ID an hour (tenant.Plan.AddressLimit, VisitorLimit), so that a
// script holding the public key cannot drain the merchant's monthly conversations. Continuing a conversation is
// not counted, and secret keys, used by servers that speak for many visitors, are exempt. Past a limit it
// answers 429 conversation_rate_limited with Retry-After.
func (s *Server) admitConversation(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, visitor string) error {
	return s.admit(w, r, m, visitor, conversationBudget)
}

// admitLeadForm applies the same limits, counted apart, to contact forms sent with a publishable key, each of
// which stores a lead and sends a lead.created webhook: past them, 429 rate_limited with Retry-After.
func (s *Server) admitLeadForm(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, visitor string) error {
	return s.admit(w, r, m, visitor, leadFormBudget)
}

// abuseBudget is what a browser creates that the plan's abuse limits count: the prefix of its counters' keys,
// and how a refusal names it (what), with its code and advice.
type abuseBudget struct {
	prefix, what, code, advice string
}

var (
	conversationBudget = abuseBudget{prefix: "", what: "conversations were started", code: codeConversationRateLimited,
		advice: "retry after the Retry-After delay or continue an existing conversation"}
	leadFormBudget = abuseBudget{prefix: "l", what: "contact forms were sent", code: codeRateLimited,
		advice: "retry after the Retry-After delay"}
)

// proxyShare is how many clients' budgets of new conversations all the clients behind one untrusted forwarding
// peer share: the ceiling of that peer's address (see admit).
const proxyShare = 10

// admit takes one from each budget of b the request counts against, in one call to the limiter (one round trip
// to Redis), all or nothing: a creation refused for its address does not count against its visitor.
//
// The budgets are the visitor's (its widget visitor ID, which a script can make up at will) and the client
// address's, which bounds a script however many visitor IDs it makes up. A peer outside trustedProxies that
// forwards for others (X-Forwarded-For: most likely the ingress, missing from trustedProxies) would make its
// address the one client of every visitor behind it, and one visitor would use up the address limit for the whole
// site. So behind such a peer the address budget is counted per peer and the client address the peer names
// last, as trusted proxies' clients are, under a ceiling for the peer of proxyShare client budgets. The named
// address is believed only that far: an ingress writes it itself, so behind one every visitor keeps a budget of
// its own, but a client talking to the runtime directly can name any address, and the ceiling bounds it to
// proxyShare times one address's budget. That is the choice of rate limiters that cannot tell a proxy from a
// client (a budget per forwarded client under a ceiling per proxy); the exact one, trustedProxies, is what the
// runtime's warning and its parley_runtime_untrusted_forwarded_requests_total metric ask for.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, visitor string, b abuseBudget) error {
	type budget struct {
		ratelimit.Quota
		refusal string // how a refusal names the budget, after the count
		shared  bool   // the ceiling of every client behind an untrusted proxy
	}
	var budgets []budget
	key := func(kind string, parts ...string) string {
		return m.MerchantID + "\x00" + b.prefix + kind + "\x00" + strings.Join(parts, "\x00")
	}
	if visitor != "" {
		budgets = append(budgets, budget{ratelimit.Quota{Key: key("v", visitor), N: m.Plan.VisitorLimit(), Period: abuseWindow},
			"by this visitor", false})
	}
	addr := addressKey(s.clientAddress(r))
	if claimed, ok := s.forwardedFor(r); ok {
		budgets = append(budgets,
			budget{ratelimit.Quota{Key: key("a", addr, addressKey(claimed)), N: m.Plan.AddressLimit(), Period: abuseWindow},
				"from this address", false},
			budget{ratelimit.Quota{Key: key("p", addr), N: m.Plan.AddressLimit() * proxyShare, Period: abuseWindow},
				"through the proxy this request came through", true})
	} else {
		budgets = append(budgets, budget{ratelimit.Quota{Key: key("a", addr), N: m.Plan.AddressLimit(), Period: abuseWindow},
			"from this address", false})
	}
	quotas := make([]ratelimit.Quota, len(budgets))
	for i, bg := range budgets {
		quotas[i] = bg.Quota
	}
	refused, wait := s.conversations.Allow(r.Context(), quotas, s.now())
	if refused < 0 {
		return nil
	}
	bg := budgets[refused]
	if bg.shared {
		// Every visitor behind that peer is refused now: louder than one client's refusal.
		logger(r).Warn("abuse limit reached for every client of a peer outside the trusted proxies", "merchant", m.MerchantID,
			"limit", bg.N, "refused", b.what)
	} else {
		logger(r).Info("abuse limit reached", "merchant", m.MerchantID, "limit", bg.N, "refused", b.what, "counted", bg.refusal)
	}
	return abuseRefused(w, wait, b, "%d %s %s within the hour", bg.N, b.what, bg.refusal)
}

// abuseRefused is the answer past an abuse limit, retryable once the budget has room again.
func abuseRefused(w http.ResponseWriter, wait time.Duration, b abuseBudget, format string, args ...any) error {
	w.Header().Set(headerRetryAfter, strconv.Itoa(max(1, ceilSeconds(wait))))
	return newError(http.StatusTooManyRequests, b.code, format+"; "+b.advice, args...)
}

// clientAddress is the address of the client the request comes from (ratelimit.Clients.Address).
func (s *Server) clientAddress(r *http.Request) netip.Addr { return s.clients.Address(r) }

// forwardedFor is the client address an untrusted forwarding peer names (ratelimit.Clients.ForwardedFor).
func (s *Server) forwardedFor(r *http.Request) (netip.Addr, bool) { return s.clients.ForwardedFor(r) }

// untrustedProxy reports whether an untrusted peer forwarded the request (ratelimit.Clients.UntrustedProxy).
func (s *Server) untrustedProxy(r *http.Request) bool { return s.clients.UntrustedProxy(r) }

func addressKey(addr netip.Addr) string { return ratelimit.AddressKey(addr) }

// forwardingNotice says, loudly, that peers outside trustedProxies forward requests: most likely the ingress or
// load balancer, which then should be listed there (admit explains what the abuse limits make of it meanwhile).
// It counts every such request and logs the first one only: a line per request would flood the log, and any
// client can send the header.
type forwardingNotice struct {
	once     sync.Once
	requests prometheus.Counter
}

func newForwardingNotice(reg prometheus.Registerer) (*forwardingNotice, error) {
	n := &forwardingNotice{requests: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "parley_runtime_untrusted_forwarded_requests_total",
		Help: "Requests with X-Forwarded-For from a peer outside the trusted proxies (the ChatRuntime's trustedProxies).",
	})}
	if err := reg.Register(n.requests); err != nil {
		return nil, fmt.Errorf("registering the forwarded requests metric: %w", err)
	}
	return n, nil
}

// observe notes a request whether its peer is an untrusted proxy.
func (n *forwardingNotice) observe(s *Server, r *http.Request, log *slog.Logger) {
	if !s.untrustedProxy(r) {
		return
	}
	n.requests.Inc()
	n.once.Do(func() {
		peer, _ := ratelimit.PeerAddress(r)
		log.Warn("a peer outside the trusted proxies forwards requests for other clients (X-Forwarded-For): "+
			"if it is the ingress or load balancer, list its network in the ChatRuntime's trustedProxies; until then "+
			"the abuse limits count every visitor behind it against one shared ceiling of the peer. Logged once; "+
			"parley_runtime_untrusted_forwarded_requests_total counts them", "peer", peer.String())
	})
}
