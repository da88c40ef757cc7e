//go:build integration

package bench

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/helpsite"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/internal/testutil/synthkb"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Load shape of BenchmarkCrawlBesideChat.
const (
	crawlPages = 1000
	// crawlChatRate is the chat requests a second of the other merchant, paced, in both phases.
	crawlChatRate = 200
	// warmUp builds the chatting merchant's index and the runtime's caches before anything is measured.
	warmUp     = 3 * time.Second
	quietPhase = 10 * time.Second
	// crawlTimeout bounds the wait for the crawl; the plan's own bound (crawl.DefaultMaxDuration) is 30 minutes.
	crawlTimeout = 5 * time.Minute
)

// BenchmarkCrawlBesideChat runs `parley runtime` on SQLite with two merchants: one chats at a paced 200
// requests a second, first alone (the quiet phase, 10 s after a warm-up), then while the other merchant's declared
// knowledge source (a tenant bundle's KnowledgeSource) is synced from a local website of 1,000 pages, each with
// navigation, a footer and two sections. It reports the crawl's time (from the sync's claim to its end, as the
// runtime's report shows it), its pages and items, the runtime's peak RSS after the quiet phase and after the
// crawl, and the chat's p50 and p99 of the requests sent in the quiet phase and of those sent while the crawl ran.
// Run it with `make bench-crawl`.
func BenchmarkCrawlBesideChat(b *testing.B) {
	site := httptest.NewServer(helpsite.Handler(crawlPages))
	b.Cleanup(site.Close)
	dir := b.TempDir()
	tenants, db := filepath.Join(dir, "tenants"), filepath.Join(dir, "parley.db")
	keys := writeBundles(b, tenants, 1)
	seedMerchants(b, db, 1, nil)
	bin := runtimeproc.Build(b)
	// The site is on loopback, which only a runtime allowed private targets crawls.
	p := runtimeproc.Start(b, bin, nil, "--tenants-dir="+tenants, "--sqlite-path="+db, "--log-level=error",
		contract.Arg(contract.FlagWebhookAllowPrivate, "true"))
	g := synthkb.New(0)
	questions := make([]string, 200)
	for i := range questions {
		questions[i] = g.Question()
	}
	paced(p.URL, keys[0], questions, func(start time.Time) bool { return time.Since(start) < warmUp })
	b.ResetTimer()

	quiet := summarise(durations(paced(p.URL, keys[0], questions, func(start time.Time) bool { return time.Since(start) < quietPhase }),
		time.Time{}, time.Now().Add(time.Hour)), quietPhase)
	quietRSS := p.PeakRSS(b)

	crawler := &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: "crawler", DisplayName: "Crawler",
		Plan: tenant.Plan{Name: "pro", RequestsPerSecond: 100, Burst: 100, KnowledgeSources: 1, PagesPerSource: crawlPages},
		Sources: []tenant.Source{{ID: "help-centre", Generation: 1, Type: tenant.SourceWebsite, URL: site.URL + "/",
			MaxPages: crawlPages, SyncIntervalSeconds: 86400}}}
	bundletest.WriteFile(b, filepath.Join(tenants, "crawler.json"), crawler)
	var (
		mu      sync.Mutex
		claimed time.Time
		final   contract.SourceReport
	)
	finished := func(start time.Time) bool {
		report := sourceReport(b, p.MetricsURL, "crawler", "help-centre")
		mu.Lock()
		defer mu.Unlock()
		if report.Status == "syncing" && claimed.IsZero() {
			claimed = time.Now()
		}
		if report.LastOutcome != "" {
			final = report
			return false
		}
		if time.Since(start) > crawlTimeout {
			b.Errorf("the crawl did not finish within %s: %+v", crawlTimeout, report)
			return false
		}
		return true
	}
	samples := paced(p.URL, keys[0], questions, finished)
	if final.LastSyncedAt == nil || claimed.IsZero() {
		b.Fatalf("the crawl was not seen running and ending: %+v", final)
	}
	took := final.LastSyncedAt.Sub(claimed)
	// Only the requests sent while the sync ran: the runtime applies a new bundle's sources within its poll.
	busy := summarise(durations(samples, claimed, *final.LastSyncedAt), took)
	b.StopTimer()

	peak := p.PeakRSS(b)
	if final.LastOutcome != "ready" || final.Pages != crawlPages {
		b.Errorf("the crawl ended %s with %d of %d pages read: %s", final.LastOutcome, final.Pages, final.PagesFound, final.Error)
	}
	if failed := failures(samples); failed > 0 {
		b.Errorf("%d chat requests failed", failed)
	}
	b.ReportMetric(took.Seconds(), "crawl-s")
	b.ReportMetric(float64(final.Items), "items")
	b.ReportMetric(float64(quietRSS)/(1<<20), "quiet-peak-RSS-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(ms(quiet.p99), "quiet-p99-ms")
	b.ReportMetric(ms(busy.p99), "crawl-p99-ms")
	b.Logf("crawl of %d pages into %d items: %s (claim to end); runtime peak RSS %.1f MiB quiet, %.1f MiB after the crawl",
		final.Pages, final.Items, took.Round(time.Millisecond), float64(quietRSS)/(1<<20), float64(peak)/(1<<20))
	b.Logf("chat of the other merchant at %d req/s: quiet p50 %s p99 %s (%.0f req/s); during the crawl p50 %s p99 %s (%.0f req/s)",
		crawlChatRate, quiet.p50, quiet.p99, quiet.rps, busy.p50, busy.p99, busy.rps)
	if busy.rps == 0 {
		b.Error("no chat request was sent while the crawl ran")
	}
}

// sample is one chat request: when it was sent, how long its answer took, and whether it was answered.
type sample struct {
	at time.Time
	d  time.Duration
	ok bool
}

// paced sends chat requests of key at crawlChatRate, on a schedule rather than when answers arrive, while more
// says to go on (it is asked about every 100 ms, with the phase's start), and returns them.
func paced(base, key string, questions []string, more func(start time.Time) bool) []sample {
	var (
		mu  sync.Mutex
		all []sample
		wg  sync.WaitGroup
	)
	start := time.Now()
	tick := time.NewTicker(time.Second / crawlChatRate)
	defer tick.Stop()
	check := time.Now()
	for going := more(start); going; <-tick.C {
		wg.Go(func() {
			t0 := time.Now()
			ok := try(base, key, questions)
			s := sample{at: t0, d: time.Since(t0), ok: ok}
			mu.Lock()
			defer mu.Unlock()
			all = append(all, s)
		})
		if time.Since(check) >= 100*time.Millisecond {
			check, going = time.Now(), more(start)
		}
	}
	wg.Wait()
	return all
}

// durations are the latencies of the samples sent from from to to.
func durations(samples []sample, from, to time.Time) []time.Duration {
	var out []time.Duration
	for _, s := range samples {
		if !s.at.Before(from) && s.at.Before(to) {
			out = append(out, s.d)
		}
	}
	return out
}

func failures(samples []sample) int {
	n := 0
	for _, s := range samples {
		if !s.ok {
			n++
		}
	}
	return n
}

// sourceReport reads a declared source's report from the runtime's usage report, as the operator does; the zero
// report until the runtime has stored it.
func sourceReport(b *testing.B, metricsURL, merchantID, sourceID string) contract.SourceReport {
	resp, err := http.Get(metricsURL + contract.UsagePath)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var report contract.UsageReport
	if err := json.NewDecoder(resp.Body).Decode(&report); err != nil {
		b.Fatal(err)
	}
	return report.Merchants[merchantID].Sources[sourceID]
}
