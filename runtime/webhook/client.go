package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrForbiddenTarget means a webhook URL resolved to an address deliveries may not reach.
var ErrForbiddenTarget = errors.New("the webhook target resolves to a loopback, private or link-local address")

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

// newClient returns the delivery client: a timeout, no redirects followed, no proxy from the environment, and
// unless allowPrivate, a dialer that checks every address it connects to, after name resolution, so that DNS
// rebinding cannot reach an internal service either.
func newClient(timeout time.Duration, allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !Public(ap.Addr()) {
				return ErrForbiddenTarget
			}
			return nil
		}
	}
	transport := &http.Transport{
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: maxResponseHeaders,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// describe turns a client error into what the delivery log shows: the cause without Go's request prefix.
func describe(err error) error {
	if errors.Is(err, ErrForbiddenTarget) {
		return ErrForbiddenTarget
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("timed out waiting for the endpoint")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("timed out waiting for the endpoint")
	}
	return fmt.Errorf("sending: %w", err)
}
