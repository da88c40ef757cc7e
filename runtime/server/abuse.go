package server

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

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

// admit takes one from the visitor's and the client address's budgets of b. Both are taken in one call to the
// limiter (one round trip to Redis), all or nothing: a creation refused for its address does not count against
// its visitor.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, visitor string, b abuseBudget) error {
	var quotas []ratelimit.Quota
	if visitor != "" {
		quotas = append(quotas, ratelimit.Quota{Key: m.MerchantID + "\x00" + b.prefix + "v\x00" + visitor, N: m.Plan.VisitorLimit(), Period: abuseWindow})
	}
	addr := s.clientAddress(r)
	quotas = append(quotas, ratelimit.Quota{Key: m.MerchantID + "\x00" + b.prefix + "a\x00" + addressKey(addr), N: m.Plan.AddressLimit(), Period: abuseWindow})
	refused, wait := s.conversations.Allow(r.Context(), quotas, s.now())
	switch {
	case refused < 0:
		return nil
	case refused == len(quotas)-1:
		if s.untrustedProxy(r) {
			// Likely the ingress, missing from trustedProxies: every visitor behind it shares its limit, and the
			// widget stops starting conversations, or sending forms, for all of them.
			logger(r).Warn("abuse limit reached for a client address that forwards requests for others (X-Forwarded-For): "+
				"if it is the ingress or load balancer, list its network in the ChatRuntime's trustedProxies",
				"merchant", m.MerchantID, "limit", m.Plan.AddressLimit(), "refused", b.what)
		} else {
			logger(r).Info("abuse limit reached for a client address", "merchant", m.MerchantID, "limit", m.Plan.AddressLimit(), "refused", b.what)
		}
		return abuseRefused(w, wait, b, "%d %s from this address within the hour", m.Plan.AddressLimit(), b.what)
	default:
		return abuseRefused(w, wait, b, "%d %s by this visitor within the hour", m.Plan.VisitorLimit(), b.what)
	}
}

// abuseRefused is the answer past an abuse limit, retryable once the budget has room again.
func abuseRefused(w http.ResponseWriter, wait time.Duration, b abuseBudget, format string, args ...any) error {
	w.Header().Set(headerRetryAfter, strconv.Itoa(max(1, ceilSeconds(wait))))
	return newError(http.StatusTooManyRequests, b.code, format+"; "+b.advice, args...)
}

// clientAddress is the address of the client the request comes from. A request from one of the trusted proxies
// (Config.TrustedProxies) comes from the address that proxy names last in X-Forwarded-For, and so on through
// trusted proxies, from the right: the first address no trusted proxy stands for is the client. X-Forwarded-For
// is ignored from anyone else, since any client can write it.
func (s *Server) clientAddress(r *http.Request) netip.Addr {
	addr, ok := peerAddress(r)
	if !ok || !s.trustedProxy(addr) {
		return addr
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return addr // a hop no trusted proxy wrote: the last one a trusted proxy saw is the client
		}
		addr = hop.Unmap()
		if !s.trustedProxy(addr) {
			return addr
		}
	}
	return addr
}

// untrustedProxy reports whether the request's TCP peer, not a trusted proxy, forwarded it for another client.
func (s *Server) untrustedProxy(r *http.Request) bool {
	addr, ok := peerAddress(r)
	return ok && r.Header.Get("X-Forwarded-For") != "" && !s.trustedProxy(addr)
}

// peerAddress is the address of the request's TCP peer.
func peerAddress(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

func (s *Server) trustedProxy(addr netip.Addr) bool {
	for _, p := range s.trustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// addressKey is what the abuse limits count per: an IPv4 address, or an IPv6 address's /64, which one subscriber
// usually holds whole.
func addressKey(addr netip.Addr) string {
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}
