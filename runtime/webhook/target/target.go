// Package target is the rule of which addresses webhook deliveries, crawls and Git fetches may reach, and the
// transport that applies it, shared by the runtime, which checks every address it dials, and the operator, which
// refuses a Webhook whose URL names a forbidden address before it reaches a bundle. It is a leaf: the operator
// imports it without linking the runtime's delivery code or its store.
package target

import "net/netip"

// forbiddenPrefixes are the ranges that are not the public internet beyond what netip's predicates cover:
// shared address space (carrier-grade NAT), IETF protocol assignments, benchmarking, the documentation ranges,
// and the IPv6 ranges that embed an IPv4 address a gateway would reach (IPv4-compatible, NAT64 well-known and
// local-use, 6to4, Teredo) or are a deprecated local scope (site-local).
var forbiddenPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// Public reports whether deliveries may reach addr when private targets are not allowed.
func Public(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return false // loopback, link-local, multicast, unspecified, RFC 1918 and ULA
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}
