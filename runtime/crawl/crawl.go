// Package crawl reads a website the way its owner would allow: it honours robots.txt (its rules for Parley and
// its crawl delay) and the robots meta tag, reads the sitemaps, stays on the site's host, names itself in its
// User-Agent, follows redirects only within the site, sends conditional requests so that an unchanged page costs
// a 304, and stops at its bounds of pages, bytes and time. It only fetches: what a page says is the ingester's,
// what becomes of it the caller's.
package crawl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

// Agent is the product token robots.txt groups name to address the crawler; UserAgent the header it sends.
const (
	Agent     = "Parley"
	UserAgent = "Mozilla/5.0 (compatible; Parley/1; knowledge sync; +https://github.com/parley-dev/parley)"
)

// Defaults of Limits.
const (
	DefaultMaxPages     = 500
	DefaultMaxPageBytes = 5 << 20
	DefaultMaxBytes     = 200 << 20
	DefaultMaxDuration  = 30 * time.Minute
	DefaultTimeout      = 20 * time.Second
	// maxRedirects bounds the redirects of one request.
	maxRedirects = 5
	// maxSitemaps bounds the sitemaps one crawl reads (an index and its children).
	maxSitemaps = 50
	// maxRobotsBytes and maxSitemapBytes bound the bodies of robots.txt (as Google does) and of a sitemap.
	maxRobotsBytes  = 512 << 10
	maxSitemapBytes = 10 << 20
	// maxCrawlDelay caps the delay a robots.txt asks for, so that one sync ends within a day however it is set.
	maxCrawlDelay = 60 * time.Second
)

// Limits bound one crawl.
type Limits struct {
	// MaxPages bounds the pages requested (unchanged ones included); sitemaps and robots.txt are not pages.
	MaxPages int
	// MaxPageBytes bounds one answer's body: a larger page is skipped.
	MaxPageBytes int64
	// MaxBytes bounds the bodies of one crawl together.
	MaxBytes int64
	// MaxDuration bounds one crawl's time.
	MaxDuration time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxPageBytes <= 0 {
		l.MaxPageBytes = DefaultMaxPageBytes
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	return l
}

// Config wires a Crawler.
type Config struct {
	// AllowPrivate lets the crawler reach loopback, private and link-local addresses (parley dev, tests).
	AllowPrivate bool
	// Timeout bounds one request; DefaultTimeout when zero.
	Timeout time.Duration
	// Delay is the least time between two requests to a site, whatever its robots.txt says.
	Delay time.Duration
}

// Crawler reads websites. It is safe for concurrent use: each Crawl is independent.
type Crawler struct {
	transport http.RoundTripper
	timeout   time.Duration
	delay     time.Duration
}

// New builds a Crawler.
func New(cfg Config) *Crawler {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Crawler{transport: NewTransport(cfg.Timeout, cfg.AllowPrivate), timeout: cfg.Timeout, delay: cfg.Delay}
}

// Known is what an earlier crawl learned of a page: the validators of its answer, and its links, followed when
// the page answers 304.
type Known struct {
	ETag, LastModified string
	Links              []string
}

// Page is one page the crawl reached.
type Page struct {
	// URL is the page's address after redirects, without a fragment.
	URL string
	// NotModified says the page answered 304 to the conditional request: Body is empty, Links are the known ones.
	NotModified bool
	// Body and ContentType are the answer's.
	Body        []byte
	ContentType string
	// ETag and LastModified are the answer's validators.
	ETag, LastModified string
	// Links are the pages of the site the page links to (for HTML pages).
	Links []string
	// Skipped says why the page was not read; the other fields but URL are then empty.
	Skipped string
	// Transient says a skipped page may well be back on the next crawl (a timeout, a 5xx): what an earlier crawl
	// made of it should stay.
	Transient bool
}

// Result is what a crawl found.
type Result struct {
	// Found counts the pages found; Fetched those requested; Read those read or unchanged.
	Found, Fetched, Read int
	// Reached holds every page the crawl reached, read or skipped; Gone the pages that answered 404 or 410.
	Reached map[string]bool
	Gone    []string
	// Stopped says why the crawl stopped before it read every page it found (a bound); empty when it did not.
	Stopped string
}

// Complete reports whether the crawl reached every page it found, so that a known page it did not reach is no
// longer on the site.
func (r Result) Complete() bool { return r.Stopped == "" }

// crawl is the state of one Crawl.
type crawl struct {
	c      *Crawler
	client *http.Client
	site   *url.URL
	scope  Scope
	robots *robotstxt.Group
	limits Limits
	known  map[string]Known
	handle func(Page) error
	delay  time.Duration
	last   time.Time
	queue  []*url.URL
	queued map[string]bool
	bytes  int64
	result Result
	start  string
	// sitemaps are the sitemaps robots.txt names (or the usual one), read after the start page is queued.
	sitemaps []string
	// err is the first error of handle called while queueing, returned by run.
	err error
}

// Crawl reads the site at start (a page or a sitemap) within scope and limits, and calls handle with each page
// it reaches, in the order it finds them; an error from handle ends the crawl with it. known maps the URLs an
// earlier crawl read to what it learned. Crawl fails when the site cannot be read at all: its start address is
// not an http(s) URL, robots.txt forbids it, or it does not answer.
func (c *Crawler) Crawl(ctx context.Context, start string, scope Scope, limits Limits, known map[string]Known, handle func(Page) error) (Result, error) {
	u, err := url.Parse(start)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, fmt.Errorf("the address %q is not an http or https URL", start)
	}
	u.Fragment = ""
	limits = limits.withDefaults()
	bounded, cancel := context.WithTimeout(ctx, limits.MaxDuration)
	defer cancel()
	cr := &crawl{c: c, site: u, scope: scope, limits: limits, known: known, handle: handle, delay: c.delay,
		queued: map[string]bool{}, result: Result{Reached: map[string]bool{}}, start: u.String()}
	cr.client = &http.Client{Transport: c.transport, Timeout: c.timeout, CheckRedirect: cr.checkRedirect}
	if err := cr.readRobots(bounded); err != nil {
		return cr.result, err
	}
	if !looksLikeSitemap(u) {
		if !cr.robots.Test(u.EscapedPath()) {
			return cr.result, fmt.Errorf("robots.txt of %s disallows %s to Parley", u.Host, u.EscapedPath())
		}
		cr.enqueue(u)
	}
	cr.readSitemaps(bounded, cr.sitemaps)
	err = cr.run(ctx, bounded)
	if err == nil && cr.result.Read == 0 {
		err = errors.New("no page of the site could be read")
	}
	return cr.result, err
}

// readRobots reads the site's robots.txt: its group for Parley, its crawl delay and its sitemaps. An answer of
// 4xx allows everything; 5xx or no answer disallows everything (RFC 9309), and fails the crawl.
func (cr *crawl) readRobots(ctx context.Context) error {
	ref := &url.URL{Scheme: cr.site.Scheme, Host: cr.site.Host, Path: "/robots.txt"}
	resp, err := cr.get(ctx, ref, Known{}, maxRobotsBytes)
	if errors.Is(err, ErrForbiddenTarget) {
		return fmt.Errorf("reading %s: %w", ref, ErrForbiddenTarget)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %s", ref, describe(err))
	}
	data, err := robotstxt.FromStatusAndBytes(resp.status, resp.body)
	if err != nil {
		return fmt.Errorf("reading %s: %w", ref, err)
	}
	if resp.status >= 500 {
		return fmt.Errorf("%s answered %d: the site may not be read", ref, resp.status)
	}
	cr.robots = data.FindGroup(Agent)
	cr.delay = max(cr.delay, min(cr.robots.CrawlDelay, maxCrawlDelay))
	sitemaps := data.Sitemaps
	if len(sitemaps) == 0 {
		sitemaps = []string{(&url.URL{Scheme: cr.site.Scheme, Host: cr.site.Host, Path: "/sitemap.xml"}).String()}
	}
	if looksLikeSitemap(cr.site) {
		sitemaps = append([]string{cr.site.String()}, sitemaps...)
	}
	cr.sitemaps = sitemaps
	return nil
}

// looksLikeSitemap reports whether a start address names a sitemap rather than a page.
func looksLikeSitemap(u *url.URL) bool {
	p := strings.ToLower(u.Path)
	return strings.HasSuffix(p, ".xml") || strings.HasSuffix(p, ".xml.gz")
}

// readSitemaps enqueues the pages of the sitemaps and of the sitemap indexes they name, up to maxSitemaps
// documents. A sitemap that cannot be read is passed over: it only helps find pages.
func (cr *crawl) readSitemaps(ctx context.Context, refs []string) {
	seen := map[string]bool{}
	for read := 0; len(refs) > 0 && read < maxSitemaps && ctx.Err() == nil; {
		ref := refs[0]
		refs = refs[1:]
		u, err := url.Parse(ref)
		if err != nil || seen[ref] || !cr.onSite(u) {
			continue
		}
		seen[ref] = true
		read++
		resp, err := cr.get(ctx, u, Known{}, maxSitemapBytes)
		if err != nil || resp.status != http.StatusOK {
			continue
		}
		sm, ok := readSitemap(bytes.NewReader(resp.body))
		if !ok {
			continue
		}
		refs = append(refs, sm.Sitemaps...)
		for _, loc := range sm.URLs {
			if p, err := url.Parse(strings.TrimSpace(loc)); err == nil {
				cr.enqueue(p)
			}
		}
	}
}

// run reads the queue until it is empty or a bound stops it: ctx is the caller's, bounded the crawl's, which
// ends at the time limit.
func (cr *crawl) run(ctx, bounded context.Context) error {
	for len(cr.queue) > 0 {
		if cr.err != nil {
			return cr.err
		}
		if cr.result.Fetched >= cr.limits.MaxPages {
			cr.result.Stopped = fmt.Sprintf("stopped at the limit of %d pages", cr.limits.MaxPages)
			return nil
		}
		if cr.bytes >= cr.limits.MaxBytes {
			cr.result.Stopped = fmt.Sprintf("stopped at the limit of %d bytes", cr.limits.MaxBytes)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if bounded.Err() != nil {
			cr.result.Stopped = fmt.Sprintf("stopped at the time limit of %s", cr.limits.MaxDuration)
			return nil
		}
		u := cr.queue[0]
		cr.queue = cr.queue[1:]
		if cr.result.Reached[u.String()] {
			continue // read through a redirect
		}
		page := cr.fetch(bounded, u)
		if page.URL == "" {
			continue // a redirect to a page already reached
		}
		cr.result.Reached[page.URL] = true
		if page.Skipped == "" {
			cr.result.Read++
		}
		if err := cr.handle(page); err != nil {
			return err
		}
	}
	return cr.err
}

// fetch requests one page and turns the answer into a Page.
func (cr *crawl) fetch(ctx context.Context, u *url.URL) Page {
	ref := u.String()
	cr.result.Fetched++
	resp, err := cr.get(ctx, u, cr.known[ref], cr.limits.MaxPageBytes)
	switch {
	case errors.Is(err, errTooLarge):
		return Page{URL: ref, Skipped: fmt.Sprintf("larger than %d bytes", cr.limits.MaxPageBytes)}
	case errors.Is(err, errOffSite):
		return Page{URL: ref, Skipped: "redirects off the site"}
	case err != nil:
		return Page{URL: ref, Skipped: describe(err), Transient: true}
	}
	final := *resp.url
	final.Fragment = ""
	if got := final.String(); got != ref {
		// A redirect within the site: the page is known by where it ended, once.
		cr.result.Reached[ref] = true
		if cr.result.Reached[got] {
			return Page{}
		}
		if !cr.queued[got] {
			cr.queued[got] = true
			cr.result.Found++
		}
		if !cr.robots.Test(final.EscapedPath()) {
			return Page{URL: got, Skipped: "disallowed by robots.txt"}
		}
		ref = got
	}
	switch {
	case resp.status == http.StatusNotModified:
		k := cr.known[ref]
		for _, l := range k.Links {
			if lu, err := url.Parse(l); err == nil {
				cr.enqueue(lu)
			}
		}
		return Page{URL: ref, NotModified: true, ETag: k.ETag, LastModified: k.LastModified, Links: k.Links}
	case resp.status == http.StatusNotFound || resp.status == http.StatusGone:
		cr.result.Gone = append(cr.result.Gone, ref)
		return Page{URL: ref, Skipped: "gone: " + statusText(resp.status)}
	case resp.status >= 500 || resp.status == http.StatusTooManyRequests:
		return Page{URL: ref, Skipped: "the site answered " + statusText(resp.status), Transient: true}
	case resp.status != http.StatusOK:
		return Page{URL: ref, Skipped: "the site answered " + statusText(resp.status)}
	}
	page := Page{URL: ref, Body: resp.body, ContentType: resp.header.Get("Content-Type"), ETag: resp.header.Get("ETag"),
		LastModified: resp.header.Get("Last-Modified")}
	if strings.HasPrefix(strings.ToLower(page.ContentType), "text/html") || strings.Contains(page.ContentType, "xhtml") {
		meta := readHTML(&final, resp.body)
		if !meta.nofollow {
			for _, l := range meta.links {
				if cr.enqueue(l) {
					page.Links = append(page.Links, l.String())
				}
			}
		}
		if meta.noindex {
			return Page{URL: ref, Skipped: "the page asks not to be indexed (robots meta tag)", Links: page.Links}
		}
	}
	if ref == cr.start && !cr.scope.Allows(final.EscapedPath()) {
		return Page{URL: ref, Skipped: "outside the include and exclude patterns (read for its links)", Links: page.Links}
	}
	return page
}

// skippedExtensions are the files no ingester reads: fetching them would only spend the site's bandwidth.
var skippedExtensions = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".bmp": true,
	".css": true, ".js": true, ".mjs": true, ".map": true, ".json": true, ".woff": true, ".woff2": true, ".ttf": true,
	".zip": true, ".gz": true, ".tar": true, ".rar": true, ".7z": true, ".exe": true, ".dmg": true, ".iso": true,
	".mp3": true, ".mp4": true, ".mov": true, ".avi": true, ".webm": true, ".wav": true, ".ogg": true,
}

// enqueue queues a page of the site, once, unless robots.txt or the scope leave it out; a page robots.txt
// disallows is reported as skipped, so that the owner sees why. It reports whether the URL is a page of the site
// in scope (queued now or before).
func (cr *crawl) enqueue(u *url.URL) bool {
	if !cr.onSite(u) {
		return false
	}
	v := *u
	v.Fragment, v.RawFragment = "", ""
	if v.Path == "" {
		v.Path = "/"
	}
	if skippedExtensions[strings.ToLower(path.Ext(v.Path))] {
		return false
	}
	ref := v.String()
	if cr.queued[ref] {
		return true
	}
	start := ref == cr.start
	if !start && !cr.scope.Allows(v.EscapedPath()) {
		return false
	}
	cr.queued[ref] = true
	cr.result.Found++
	if !cr.robots.Test(v.EscapedPath()) {
		cr.result.Reached[ref] = true
		if err := cr.handle(Page{URL: ref, Skipped: "disallowed by robots.txt"}); err != nil && cr.err == nil {
			cr.err = err
		}
		return true
	}
	cr.queue = append(cr.queue, &v)
	return true
}

// onSite reports whether u is on the crawl's site: http(s), the same host and port.
func (cr *crawl) onSite(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && sameHost(u.Host, cr.site.Host)
}

// sameHost reports whether two hosts are one site: equal, or apart by a leading "www.".
func sameHost(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	return a == b || "www."+a == b || a == "www."+b
}

var (
	errTooLarge = errors.New("the answer is too large")
	errOffSite  = errors.New("a redirect leaves the site")
)

// checkRedirect follows redirects within the site only, at most maxRedirects.
func (cr *crawl) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	if !cr.onSite(req.URL) {
		return errOffSite
	}
	// The page redirected to may be known: ask for it conditionally too.
	target := *req.URL
	target.Fragment = ""
	if k, ok := cr.known[target.String()]; ok {
		setValidators(req, k)
	}
	return nil
}

// answer is what the crawler keeps of an HTTP answer: its status, headers, final URL and bounded body.
type answer struct {
	status int
	header http.Header
	url    *url.URL
	body   []byte
}

// statusText is a status as a page's record shows it: "404 Not Found".
func statusText(code int) string { return fmt.Sprintf("%d %s", code, http.StatusText(code)) }

// get requests u, conditionally when known has validators, after the crawl delay, and reads at most maxBytes of
// its body.
func (cr *crawl) get(ctx context.Context, u *url.URL, known Known, maxBytes int64) (answer, error) {
	if wait := time.Until(cr.last.Add(cr.delay)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return answer{}, ctx.Err()
		case <-t.C:
		}
	}
	defer func() { cr.last = time.Now() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/pdf,*/*;q=0.5")
	setValidators(req, known)
	resp, err := cr.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(ue.Err, errOffSite) {
			return answer{}, errOffSite
		}
		return answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	cr.bytes += int64(len(body))
	if err != nil {
		return answer{}, err
	}
	if int64(len(body)) > maxBytes {
		return answer{}, errTooLarge
	}
	return answer{status: resp.StatusCode, header: resp.Header, url: resp.Request.URL, body: body}, nil
}

// setValidators makes req conditional on what an earlier crawl learned of its page.
func setValidators(req *http.Request, known Known) {
	if known.ETag != "" {
		req.Header.Set("If-None-Match", known.ETag)
	}
	if known.LastModified != "" {
		req.Header.Set("If-Modified-Since", known.LastModified)
	}
}

// describe turns a request error into what a page's record shows: the cause without Go's request prefix.
func describe(err error) string {
	if errors.Is(err, ErrForbiddenTarget) {
		return ErrForbiddenTarget.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out waiting for the site"
	}
	return err.Error()
}
