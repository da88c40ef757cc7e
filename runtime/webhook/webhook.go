// Package webhook delivers the events of the store's outbox to the merchants' webhook endpoints: signed per
// Standard Webhooks, at least once, retried with backoff and jitter, never to private addresses unless allowed,
// with every attempt logged in the store. Any number of runtime replicas may run a Dispatcher on one store: each
// delivery is leased by one of them at a time.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// DefaultSchedule is the wait after each failed attempt: eight attempts over about a day and a half.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// Defaults of Config.
const (
	DefaultTimeout = 10 * time.Second
	DefaultPoll    = time.Second
	DefaultWorkers = 16
	// MerchantShare is how many merchants share the workers at least: by default one merchant holds at most
	// Workers/MerchantShare of them (Config.PerMerchant).
	MerchantShare = 4
	// maxResponseBody is how much of an answer is read, so that connections are reused.
	maxResponseBody = 64 << 10
	// maxErrorBytes bounds what the delivery log keeps of a failure's description: it is shared by every
	// merchant's deliveries, and returned with each in the API's listings.
	maxErrorBytes = 512
	// userAgent names the sender to the receivers.
	userAgent = "Parley-Webhooks/1"
)

// Config wires a Dispatcher.
type Config struct {
	// Outbox is where the deliveries come from and their attempts go.
	Outbox  Outbox
	Tenants *tenant.Registry
	Logger  *slog.Logger
	// Registry receives the delivery metrics.
	Registry prometheus.Registerer
	// AllowPrivate lets deliveries reach loopback, private and link-local addresses (for development and tests).
	AllowPrivate bool
	// Schedule is the wait after each failed attempt; DefaultSchedule when nil. Its length plus one is the
	// number of attempts.
	Schedule []time.Duration
	// Timeout bounds one attempt; DefaultTimeout when zero.
	Timeout time.Duration
	// Lease is how long a claimed delivery stays with this dispatcher; twice the timeout when zero.
	Lease time.Duration
	// Poll is how often the outbox is read when nothing wakes the dispatcher; DefaultPoll when zero.
	Poll time.Duration
	// Workers bounds the attempts in flight; DefaultWorkers when zero.
	Workers int
	// PerMerchant bounds one merchant's attempts in flight, across the replicas sharing the store, so that a
	// merchant's slow endpoint or backlog leaves workers to the others; Workers/MerchantShare (at least one) when
	// zero.
	PerMerchant int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Outbox is what the dispatcher needs of the store: the due deliveries, and a place for each attempt's outcome.
// chat.Outbox is the runtime's.
type Outbox interface {
	// ClaimDeliveries leases up to limit due deliveries until now+lease, oldest due first, at most perMerchant
	// of one merchant at once.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]store.Delivery, error)
	// RecordAttempt records an attempt and moves its delivery to the attempt's outcome.
	RecordAttempt(ctx context.Context, a store.Attempt) error
}

// Dispatcher delivers the outbox.
type Dispatcher struct {
	outbox   Outbox
	tenants  *tenant.Registry
	log      *slog.Logger
	client   *http.Client
	schedule []time.Duration
	timeout  time.Duration
	lease    time.Duration
	poll     time.Duration
	workers  int
	// perMerchant bounds one merchant's leases (Config.PerMerchant).
	perMerchant int
	now         func() time.Time
	wake        chan struct{}
	metrics     *metrics
}

// New builds a Dispatcher; Run starts it.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Outbox == nil || cfg.Tenants == nil || cfg.Registry == nil {
		return nil, errors.New("webhook: outbox, tenants and registry are required")
	}
	d := &Dispatcher{
		outbox: cfg.Outbox, tenants: cfg.Tenants, log: cfg.Logger, schedule: cfg.Schedule, timeout: cfg.Timeout,
		lease: cfg.Lease, poll: cfg.Poll, workers: cfg.Workers, perMerchant: cfg.PerMerchant, now: cfg.Now, wake: make(chan struct{}, 1),
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.schedule == nil {
		d.schedule = DefaultSchedule
	}
	if d.timeout <= 0 {
		d.timeout = DefaultTimeout
	}
	if d.lease <= 0 {
		d.lease = 2 * d.timeout
	}
	if d.poll <= 0 {
		d.poll = DefaultPoll
	}
	if d.workers <= 0 {
		d.workers = DefaultWorkers
	}
	if d.perMerchant <= 0 {
		d.perMerchant = max(1, d.workers/MerchantShare)
	}
	if d.now == nil {
		d.now = time.Now
	}
	d.client = newClient(d.timeout, cfg.AllowPrivate)
	var err error
	if d.metrics, err = newMetrics(cfg.Registry); err != nil {
		return nil, err
	}
	return d, nil
}

// Notify wakes the dispatcher: new deliveries are waiting. It never blocks.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight.
func (d *Dispatcher) Run(ctx context.Context) error {
	sem := make(chan struct{}, d.workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-d.wake:
		}
		// Claim only what the free workers can start now, so that nothing waits here holding a lease; and nothing
		// before the tenants are loaded, or deliveries of merchants not yet known would be cancelled.
		for free := d.workers - len(sem); free > 0 && d.tenants.Synced(); free = d.workers - len(sem) {
			batch, err := d.outbox.ClaimDeliveries(ctx, d.now(), d.lease, free, d.perMerchant)
			if err != nil {
				if ctx.Err() == nil {
					d.log.Error("claiming webhook deliveries", "error", err)
				}
				break
			}
			for _, del := range batch {
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer func() { <-sem; wg.Done() }()
					d.deliver(context.WithoutCancel(ctx), del)
				}()
			}
			if len(batch) < free {
				break
			}
		}
		d.metrics.inFlight.Set(float64(len(sem)))
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(d.poll)
	}
}

// deliver makes one attempt at a delivery and records it.
func (d *Dispatcher) deliver(ctx context.Context, del store.Delivery) {
	log := d.log.With("merchant", del.MerchantID, "delivery", del.ID, "event", del.EventType, "webhook", del.WebhookID)
	hook, reason := d.endpoint(del)
	if hook == nil {
		d.metrics.attempts.WithLabelValues(del.MerchantID, store.DeliveryCancelled).Inc()
		d.record(ctx, log, store.Attempt{MerchantID: del.MerchantID, DeliveryID: del.ID, At: d.now(),
			Status: store.DeliveryCancelled, Error: reason})
		return
	}
	start := d.now()
	code, err := d.send(ctx, hook, del, start)
	latency := d.now().Sub(start)
	a := store.Attempt{MerchantID: del.MerchantID, DeliveryID: del.ID, At: start, URL: hook.URL, StatusCode: code,
		Latency: latency}
	var retryIn time.Duration
	a.Status, retryIn, a.DisableEndpoint = Decide(code, err, del.Attempts+1, d.schedule)
	if a.Status == store.DeliveryPending {
		a.NextAttemptAt = start.Add(jitter(retryIn))
	}
	switch {
	case err != nil:
		a.Error = truncate(err.Error(), maxErrorBytes)
	case a.Status != store.DeliverySucceeded:
		a.Error = fmt.Sprintf("the endpoint answered %d %s", code, http.StatusText(code))
	}
	// Counted before it is recorded, so that whoever sees the delivery settled in the store sees it counted.
	d.metrics.attempts.WithLabelValues(del.MerchantID, outcomeLabel(a)).Inc()
	d.metrics.latency.Observe(latency.Seconds())
	if a.Status == store.DeliverySucceeded {
		d.metrics.lag.Observe(d.now().Sub(del.EventCreatedAt).Seconds())
	}
	d.record(ctx, log, a)
	log.Info("webhook attempt", "attempt", del.Attempts+1, "status", a.Status, "code", code,
		"latency_ms", latency.Milliseconds(), "error", a.Error)
}

// truncate cuts s to at most n bytes, on a character boundary, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func (d *Dispatcher) record(ctx context.Context, log *slog.Logger, a store.Attempt) {
	if err := d.outbox.RecordAttempt(ctx, a); err != nil {
		// The lease runs out and the delivery is tried again: at least once, never lost.
		log.Error("recording webhook attempt", "error", err)
	}
}

// endpoint finds the delivery's webhook in the merchant's current bundle, or says why it no longer receives
// the event.
func (d *Dispatcher) endpoint(del store.Delivery) (*tenant.Webhook, string) {
	m, ok := d.tenants.Merchant(del.MerchantID)
	switch {
	case !ok:
		return nil, "the merchant no longer exists"
	case !m.Plan.Webhooks:
		return nil, "the merchant's plan does not include webhooks"
	}
	for i := range m.Webhooks {
		if w := &m.Webhooks[i]; w.ID == del.WebhookID {
			// A test event goes to the endpoint it was sent to, whatever that one subscribes to.
			if del.EventType != contract.EventWebhookTest && !slices.Contains(w.Events, tenant.Event(del.EventType)) {
				return nil, "the webhook no longer subscribes to " + del.EventType
			}
			return w, ""
		}
	}
	return nil, "the webhook was removed or disabled"
}

// send posts the event, signed with each of the webhook's secrets, and returns the answer's status code.
func (d *Dispatcher) send(ctx context.Context, hook *tenant.Webhook, del store.Delivery, at time.Time) (int, error) {
	sig, err := Sign(hook.SigningSecrets, del.EventID, at, del.Payload)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(del.Payload))
	if err != nil {
		return 0, fmt.Errorf("building the request: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", userAgent)
	h.Set(standardwebhooks.HeaderWebhookID, del.EventID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, describe(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// Sign returns the webhook-signature header of a message: a v1 signature per secret, separated by spaces, so that
// a receiver holding either the current or the previous secret can verify during a rotation.
func Sign(secrets []string, id string, at time.Time, payload []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for i, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			// Never the secret itself in an error.
			return "", fmt.Errorf("signing secret %d is not whsec_ and base64", i+1)
		}
		sig, err := wh.Sign(id, at, payload)
		if err != nil {
			return "", fmt.Errorf("signing: %w", err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Decide says what an attempt's answer (or error) means for its delivery, given the number of attempts made
// including this one: the new status, when pending the wait before the next attempt, and whether the endpoint is
// gone. Timeouts, connection errors, 408, 429 and 5xx are retried while the schedule lasts; 410 disables the
// endpoint; a refused target, redirects and other 4xx fail at once, since retrying cannot change them.
func Decide(code int, err error, attempts int, schedule []time.Duration) (status string, retryIn time.Duration, disable bool) {
	retryable := false
	switch {
	case errors.Is(err, ErrForbiddenTarget):
		return store.DeliveryFailed, 0, false
	case err != nil:
		retryable = true
	case code >= 200 && code < 300:
		return store.DeliverySucceeded, 0, false
	case code == http.StatusGone:
		return store.DeliveryFailed, 0, true
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500:
		retryable = true
	}
	if !retryable || attempts > len(schedule) {
		return store.DeliveryFailed, 0, false
	}
	return store.DeliveryPending, schedule[attempts-1], false
}

// jitter spreads a wait by up to a fifth either way, so that endpoints recovering from an outage are not hit by
// every retry at once.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d)) //nolint:gosec // spreading retries needs no secure randomness
}

func outcomeLabel(a store.Attempt) string {
	if a.Status == store.DeliveryPending {
		return "retrying"
	}
	return a.Status
}

type metrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	lag      prometheus.Histogram
	inFlight prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_runtime_webhook_attempts_total",
			Help: "Webhook delivery attempts by merchant and outcome: succeeded, retrying, failed, or cancelled (not sent).",
		}, []string{"merchant", "outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_runtime_webhook_attempt_duration_seconds",
			Help:    "How long webhook endpoints took to answer.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 9),
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_runtime_webhook_delivery_lag_seconds",
			Help:    "Time from an event to its successful delivery, retries included.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 5, 30, 300, 1800, 7200, 36000, 129600},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_runtime_webhook_attempts_in_flight",
			Help: "Webhook attempts this replica is making now.",
		}),
	}
	for _, c := range []prometheus.Collector{m.attempts, m.latency, m.lag, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering webhook metrics: %w", err)
		}
	}
	return m, nil
}
