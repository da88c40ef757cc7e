package server

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
)

// BenchmarkChatStream measures the streaming path against the fake provider, whose first piece comes after 20 ms
// and each of its ten pieces 2 ms apart: the time to the first delta event and to the end event, next to the
// provider's own times to its first and last chunk, and the runtime's added latency (end to end minus the
// provider's).
func BenchmarkChatStream(b *testing.B) {
	pieces := make([]string, 10)
	for i := range pieces {
		pieces[i] = "piece "
	}
	provider := fakellm.New(b, pieces...)
	provider.Set(func(p *fakellm.Provider) { p.Delay, p.PieceDelay = 20*time.Millisecond, 2*time.Millisecond })
	e := newEnv(b, withModel(b, provider))
	e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")
	e.validate = false

	direct := func() (first, last time.Duration) {
		body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, provider.URL()+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return timeStream(b, req, "data: ", "data: [DONE]")
	}
	viaRuntime := func() (first, last time.Duration) {
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, e.url+"/api/v1/chat",
			strings.NewReader(`{"message": "How long can I return things?"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-API-Key", e.keys["alpha-sk"])
		return timeStream(b, req, "event: delta", "event: end")
	}
	var providerFirst, providerLast, first, last time.Duration
	b.ResetTimer()
	for b.Loop() {
		pf, pl := direct()
		f, l := viaRuntime()
		providerFirst, providerLast, first, last = providerFirst+pf, providerLast+pl, first+f, last+l
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(first), "ttfb-ms")
	b.ReportMetric(ms(last), "total-ms")
	b.ReportMetric(ms(providerFirst), "provider-ttfb-ms")
	b.ReportMetric(ms(providerLast), "provider-total-ms")
	b.ReportMetric(ms(last-providerLast), "added-ms")
}

// timeStream sends req and returns the time to the first line starting with firstPrefix and to the line lastLine.
func timeStream(b *testing.B, req *http.Request, firstPrefix, lastLine string) (first, last time.Duration) {
	b.Helper()
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if first == 0 && strings.HasPrefix(line, firstPrefix) {
			first = time.Since(start)
		}
		if line == lastLine {
			last = time.Since(start)
			_, _ = io.Copy(io.Discard, res.Body)
			return first, last
		}
	}
	b.Fatalf("the stream ended without %q (status %d)", lastLine, res.StatusCode)
	return 0, 0
}
