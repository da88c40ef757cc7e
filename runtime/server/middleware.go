package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/ids"
)

// Headers the runtime reads or writes, in their canonical form (textproto.CanonicalMIMEHeaderKey): a name that is
// not would be converted, a new string, every time a request's header is read or set with it. The lists of names
// sent to browsers (see allowCORS) spell them as the API documents them.
const (
	headerRequestID       = "X-Request-Id"
	headerAPIKey          = "X-Api-Key"
	headerMerchantID      = "X-Merchant-Id"
	headerVisitorID       = "X-Visitor-Id"
	headerRateLimit       = "Ratelimit"
	headerRateLimitPolicy = "Ratelimit-Policy"
	headerRetryAfter      = "Retry-After"
	contentTypeJSON       = "application/json"
)

// requestInfoKey is the context key of a request's *requestInfo.
type requestInfoKey struct{}

// requestInfo is what instrument and the handlers after it know of a request, kept in its context as one value,
// so that the request and its context are copied once rather than once for each.
type requestInfo struct {
	id        string
	log       *slog.Logger
	route     string    // set by named
	caller    keyCaller // set by s.visitor (withCaller)
	hasCaller bool
}

// info is the request's requestInfo, or nil outside instrument.
func info(r *http.Request) *requestInfo {
	i, _ := r.Context().Value(requestInfoKey{}).(*requestInfo)
	return i
}

// A caller's request ID is kept when it is short and plain, so that it can be followed across systems.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,64}$`)

// logger is the request's logger, which names its request ID. It is made when first asked for: most requests
// log nothing but the access line, and a logger with an attribute costs a handler of its own.
func logger(r *http.Request) *slog.Logger {
	if i := info(r); i != nil && i.log != nil {
		return i.log.With("request_id", i.id)
	}
	return slog.Default()
}

// requestID is the ID instrument gave the request.
func requestID(r *http.Request) string {
	if i := info(r); i != nil {
		return i.id
	}
	return ""
}

// statusRecorder remembers the status written, for logs and metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_runtime_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parley_runtime_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering HTTP metrics: %w", err)
		}
	}
	return m, nil
}

// instrument is the outer middleware: request ID, logger, recovery, access log and metrics. The route label is
// the name the router gave the matched route (see named), never the raw path, so metrics stay bounded.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(headerRequestID)
		if !validRequestID.MatchString(id) {
			id = ids.New("req_")
		}
		w.Header().Set(headerRequestID, id)
		log := s.log
		ri := &requestInfo{id: id, log: log}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri))
		rec := &statusRecorder{ResponseWriter: w}
		s.forwarding.observe(s, r, log)

		defer func() {
			if p := recover(); p != nil {
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(p)
				}
				log.Error("panic serving request", "request_id", id, "panic", p, "path", r.URL.Path)
				if rec.status == 0 {
					fail(rec, r, internalError()) // an apiError, so the panic is not logged twice
				}
			}
			elapsed := time.Since(start)
			label := ri.route
			if label == "" {
				label = "unmatched"
			}
			s.metrics.requests.WithLabelValues(label, strconv.Itoa(rec.status)).Inc()
			s.metrics.duration.WithLabelValues(label).Observe(elapsed.Seconds())
			level := slog.LevelInfo
			if rec.status >= 500 {
				level = slog.LevelError
			}
			// Asked first: the access line's attributes cost allocations even when the level drops the line.
			if log.Enabled(r.Context(), level) {
				log.Log(r.Context(), level, "request", "request_id", id, "method", r.Method, "route", label,
					"status", rec.status, "duration_ms", float64(elapsed.Microseconds())/1000)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}
