package crawl

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/parley-dev/parley/runtime/webhook/target"
)

// ErrForbiddenTarget means a site's address resolved to an address the crawler may not reach.
var ErrForbiddenTarget = errors.New("the site resolves to a loopback, private or link-local address")

// NewTransport returns the transport of the crawler and of the Git reader: no proxy from the environment, bounded
// headers, and unless allowPrivate a dialer that checks every address it connects to, after name resolution, as
// the webhook client's does, so that a source cannot make the runtime read an internal service, DNS rebinding
// included.
func NewTransport(timeout time.Duration, allowPrivate bool) *http.Transport {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !target.Public(ap.Addr()) {
				return ErrForbiddenTarget
			}
			return nil
		}
	}
	return &http.Transport{
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
}
