package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/parley-dev/parley/runtime/webhook/target"
)

// ErrForbiddenTarget means a webhook URL resolved to an address deliveries may not reach.
var ErrForbiddenTarget = errors.New("the webhook target resolves to a loopback, private or link-local address")

// newClient returns the delivery client: a timeout, no redirects followed, no proxy from the environment, and
// unless allowPrivate, a dialer that checks every address it connects to, after name resolution, so that DNS
// rebinding cannot reach an internal service either.
func newClient(timeout time.Duration, allowPrivate bool) *http.Client {
	transport := target.Transport(timeout, allowPrivate, ErrForbiddenTarget)
	transport.MaxIdleConnsPerHost, transport.IdleConnTimeout = 8, 90*time.Second
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
