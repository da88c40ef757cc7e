package crawl

import (
	"errors"
	"net/http"
	"time"

	"github.com/parley-dev/parley/runtime/webhook/target"
)

// ErrForbiddenTarget means a site's address resolved to an address the crawler may not reach.
var ErrForbiddenTarget = errors.New("the site resolves to a loopback, private or link-local address")

// NewTransport returns the transport of the crawler and of the Git reader: target.Transport, as the webhook
// client's, so that a source cannot make the runtime read an internal service, DNS rebinding included.
func NewTransport(timeout time.Duration, allowPrivate bool) *http.Transport {
	t := target.Transport(timeout, allowPrivate, ErrForbiddenTarget)
	t.MaxIdleConnsPerHost, t.IdleConnTimeout = 2, 30*time.Second
	return t
}
