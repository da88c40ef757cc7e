package target

import (
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// maxResponseHeaders bounds an answer's headers, which a server could otherwise make 10 MB long (Go's default),
// every byte of a malformed one quoted in the error.
const maxResponseHeaders = 64 << 10

// Transport returns the transport of requests to addresses a tenant names (webhook deliveries, crawls, Git
// fetches): no proxy from the environment, bounded response headers, and unless allowPrivate a dialer that checks
// every address it connects to, after name resolution, so that DNS rebinding cannot reach an internal service
// either; it refuses a forbidden address with forbidden. Idle connections are the caller's to tune.
func Transport(timeout time.Duration, allowPrivate bool, forbidden error) *http.Transport {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !Public(ap.Addr()) {
				return forbidden
			}
			return nil
		}
	}
	return &http.Transport{
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: maxResponseHeaders,
	}
}
