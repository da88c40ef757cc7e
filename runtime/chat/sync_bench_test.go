package chat_test

import (
	"bufio"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/testutil/helpsite"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/tenant"
)

// BenchmarkSyncWebsite1000 syncs a local website of 1,000 pages (navigation, a footer and two sections of help
// text each, found from the start page) into a fresh source on SQLite: crawl, main-content extraction, and a
// transaction a page. It reports the process's peak RSS (VmHWM, the test's site server included).
//
//	go test ./runtime/chat/ -run '^$' -bench BenchmarkSyncWebsite1000 -benchtime 1x
func BenchmarkSyncWebsite1000(b *testing.B) {
	const pages = 1000
	site := httptest.NewServer(helpsite.Handler(pages))
	defer site.Close()
	f := newFixture(b)
	m := &tenant.Bundle{MerchantID: "acme", Plan: tenant.Plan{KnowledgeSources: 1000, PagesPerSource: pages}}
	c := crawl.New(crawl.Config{AllowPrivate: true})
	b.ReportAllocs()
	for b.Loop() {
		src, problems := chat.SourceInput{URL: site.URL + "/"}.Validate(m.Plan)
		if problems != nil {
			b.Fatal(problems)
		}
		if _, err := f.svc.CreateSource(b.Context(), m, src); err != nil {
			b.Fatal(err)
		}
		claimed, err := f.store.ClaimSources(b.Context(), f.now, time.Hour, 1, 1)
		if err != nil || len(claimed) != 1 {
			b.Fatalf("claimed %v, %v", claimed, err)
		}
		if err := f.svc.SyncSource(b.Context(), m, claimed[0], chat.Readers{Web: c}, crawl.Limits{}); err != nil {
			b.Fatal(err)
		}
		done, err := f.store.GetSource(b.Context(), m.MerchantID, claimed[0].ID)
		if err != nil || done.Pages != pages || done.Items != helpsite.SectionsPerPage*pages {
			b.Fatalf("after the sync: %d pages, %d items, %q, %v", done.Pages, done.Items, done.Error, err)
		}
	}
	b.ReportMetric(peakRSSMiB(b), "peak-RSS-MiB")
}

// peakRSSMiB reads the process's peak resident set (VmHWM) from /proc.
func peakRSSMiB(b *testing.B) float64 {
	file, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc:", err)
	}
	defer func() { _ = file.Close() }()
	s := bufio.NewScanner(file)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
