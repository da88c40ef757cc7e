package ratelimit

import (
	"net/http"
	"net/netip"
	"strings"
)

// Clients tells the address of the client a request comes from, as every per-address limit of the runtime (the
// API's abuse limits, the dashboard's sign-in) counts it.
type Clients struct {
	// trusted are the networks of the proxies in front of the runtime whose X-Forwarded-For is believed.
	trusted []netip.Prefix
}

// NewClients returns the Clients of a runtime behind the proxies of the networks trusted.
func NewClients(trusted []netip.Prefix) Clients { return Clients{trusted: trusted} }

// Address is the address of the client the request comes from. A request from one of the trusted proxies comes
// from the address that proxy names last in X-Forwarded-For, and so on through trusted proxies, from the right:
// the first address no trusted proxy stands for is the client. X-Forwarded-For is ignored from anyone else,
// since any client can write it.
func (c Clients) Address(r *http.Request) netip.Addr {
	addr, ok := PeerAddress(r)
	if !ok || !c.Trusted(addr) {
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
		if !c.Trusted(addr) {
			return addr
		}
	}
	return addr
}

// ForwardedFor is the client address a TCP peer outside the trusted proxies names last in X-Forwarded-For:
// the address it says it forwards the request for. false when the peer is trusted (Address follows the header
// then) or names none.
func (c Clients) ForwardedFor(r *http.Request) (netip.Addr, bool) {
	if !c.UntrustedProxy(r) {
		return netip.Addr{}, false
	}
	hops := r.Header.Values("X-Forwarded-For")
	last := hops[len(hops)-1]
	last = last[strings.LastIndexByte(last, ',')+1:]
	addr, err := netip.ParseAddr(strings.TrimSpace(last))
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.Unmap(), true
}

// UntrustedProxy reports whether the request's TCP peer, not a trusted proxy, forwarded it for another client.
func (c Clients) UntrustedProxy(r *http.Request) bool {
	addr, ok := PeerAddress(r)
	return ok && r.Header.Get("X-Forwarded-For") != "" && !c.Trusted(addr)
}

// Trusted reports whether addr is one of the trusted proxies'.
func (c Clients) Trusted(addr netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// PeerAddress is the address of the request's TCP peer.
func PeerAddress(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// AddressKey is what a per-address limit counts per: an IPv4 address, or an IPv6 address's /64, which one
// subscriber usually holds whole.
func AddressKey(addr netip.Addr) string {
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}
