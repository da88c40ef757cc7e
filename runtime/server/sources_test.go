package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/store"
)

// shopSite is a local shop's website: a few dozen help pages inside navigation and a footer, a sitemap,
// robots.txt disallowing /internal/, a redirect from an old address, and a PDF and a Word document linked from
// its home page. It counts the answers it gives.
type shopSite struct {
	*httptest.Server
	mu          sync.Mutex
	pages       map[string]string // path -> main content
	ok          map[string]int    // 200 answers by path
	notModified int
	robots      int // robots.txt answers: one a crawl
}

const shopNav = `<header><nav><a href="/">Home</a> <a href="/help/shipping">Shipping menu</a> <a href="/help/returns">Returns menu</a> <a href="/internal/stock">Stock</a></nav></header>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies</div>`

const shopFooter = `<footer><p>Copyright Example Shop GmbH. Imprint. Privacy policy. Follow us on social media.</p></footer>`

func newShopSite(t *testing.T) *shopSite {
	t.Helper()
	s := &shopSite{ok: map[string]int{}, pages: map[string]string{
		"/": `<h1>Example Shop</h1><p>Welcome to Example Shop, the place for handmade ceramic mugs and plates.</p>` +
			`<p><a href="/help/shipping">Shipping</a>, <a href="/help/returns">returns</a> and <a href="/old-returns">the old returns page</a>.</p>` +
			`<p>Our <a href="/files/tent-care.pdf">tent care guide</a> and <a href="/files/warranty.docx">warranty conditions</a>.</p>`,
		"/help/shipping": `<h1>Shipping</h1><h2 id="germany">Shipping within Germany</h2><p>Orders within Germany arrive in two to three working days with DHL and cost 4.90 euros, free above 50 euros.</p>` +
			`<h2 id="abroad">Shipping abroad</h2><p>We ship to every country of the European Union within five to eight working days for 12 euros.</p>`,
		"/help/returns":   `<h1>Returns</h1><p>You may return any unused item within 30 days of delivery for a full refund; write to returns@example.com with your order number.</p>`,
		"/internal/stock": `<h1>Stock levels</h1><p>Confidential: 14 mugs left in the warehouse.</p>`,
	}}
	for i := range 24 {
		s.pages[fmt.Sprintf("/help/article-%d", i)] = fmt.Sprintf(`<h1>Care guide %d</h1><p>Ceramic piece number %d is dishwasher safe and may be heated in a microwave oven for up to three minutes.</p>`, i, i)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.robots++
		s.mu.Unlock()
		fmt.Fprintf(w, "User-agent: *\nDisallow: /internal/\n\nSitemap: %s/sitemap.xml\n", s.URL)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for p := range s.pages {
			if strings.HasPrefix(p, "/help/article-") {
				fmt.Fprintf(&b, "<url><loc>%s%s</loc></url>", s.URL, p)
			}
		}
		b.WriteString(`<url><loc>` + s.URL + `/internal/stock</loc></url></urlset>`)
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, b.String())
	})
	for name, media := range map[string]string{"tent-care.pdf": "application/pdf",
		"warranty.docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"} {
		body, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("/files/"+name, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			defer s.mu.Unlock()
			w.Header().Set("ETag", `"`+name+`"`)
			if r.Header.Get("If-None-Match") == `"`+name+`"` {
				s.notModified++
				w.WriteHeader(http.StatusNotModified)
				return
			}
			s.ok[r.URL.Path]++
			w.Header().Set("Content-Type", media)
			_, _ = w.Write(body)
		})
	}
	mux.HandleFunc("/old-returns", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/help/returns", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		main, ok := s.pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%d-%d"`, len(main), strings.Count(main, "e"))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			s.notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		s.ok[r.URL.Path]++
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Example Shop</title></head><body>%s<main><article>%s</article></main>%s</body></html>`,
			shopNav, main, shopFooter)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// waitSynced waits, reading the store (the API's rate limit runs on the test's clock), until a sync of the
// source ended after since, and returns the source as the API shows it.
func waitSynced(t *testing.T, e *env, id string, since string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		src, err := e.store.GetSource(t.Context(), "alpha", id)
		if err != nil {
			t.Fatal(err)
		}
		if !src.LastSyncedAt.IsZero() && src.LastSyncedAt.Format(time.RFC3339Nano) != since && src.Status != store.SourceSyncing {
			return e.do(http.MethodGet, "/api/v1/knowledge/sources/"+id, map[string]string{"Authorization": e.ownerOf("alpha")}, "").json(t)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("source %s did not finish syncing\n%s", id, e.logs)
	return nil
}

func TestWebsiteSourceEndToEnd(t *testing.T) {
	e := newEnv(t)
	site := newShopSite(t)
	syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: e.svc, Tenants: e.tenants,
		Crawler: crawl.New(crawl.Config{AllowPrivate: true}), Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go syncer.Run(t.Context())
	owner := map[string]string{"Authorization": e.ownerOf("alpha"), "Content-Type": "application/json"}
	hand := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title":"Gift wrapping","content":"We wrap gifts for 3 euros."}`)
	if hand.status != http.StatusCreated {
		t.Fatalf("creating an item by hand: %d %s", hand.status, hand.body)
	}

	res := e.do(http.MethodPost, "/api/v1/knowledge/sources", owner, `{"url":"`+site.URL+`/","sync_interval":"24h"}`)
	if res.status != http.StatusCreated {
		t.Fatalf("POST source: %d %s", res.status, res.body)
	}
	id := res.json(t)["id"].(string)
	src := waitSynced(t, e, id, "")
	if src["status"] != "ready" || src["error"] != "" {
		t.Fatalf("after the first sync: %v", src)
	}

	items := sourceItems(t, e)
	if len(items) < 29 {
		t.Errorf("%d items from the site, want one a section of its 27 pages and 2 documents at least", len(items))
	}
	for url, k := range items {
		content := k["title"].(string) + " " + k["content"].(string)
		for _, noise := range []string{"Shipping menu", "cookies", "Copyright", "Confidential"} {
			if strings.Contains(content, noise) {
				t.Errorf("item %s holds %q: %q", url, noise, content)
			}
		}
		if k["source_id"] != id {
			t.Errorf("item %s has source %v", url, k["source_id"])
		}
	}
	if k := items[site.URL+"/files/warranty.docx#section=warranty-conditions"]; k == nil || !strings.Contains(k["content"].(string), "defects in materials") {
		t.Errorf("no item of the linked Word document: %v", keysOf(items))
	}
	// A question only the linked PDF answers is answered citing the PDF at its page.
	answer := e.chat(e.keys["alpha-sk"], `{"message":"How should I store my tent so it does not grow mould?"}`)
	if answer.status != http.StatusOK {
		t.Fatalf("chat: %d %s", answer.status, answer.body)
	}
	pdfPage := site.URL + "/files/tent-care.pdf#page=2"
	if cited := answer.json(t)["sources"].([]any); len(cited) == 0 || cited[0].(map[string]any)["url"] != pdfPage {
		t.Errorf("the answer cites %v; want %s first\n%s", cited, pdfPage, answer.body)
	} else if title := cited[0].(map[string]any)["title"]; title != "Tent care guide (page 2)" {
		t.Errorf("the cited page's title: %v", title)
	}
	germany := items[site.URL+"/help/shipping#germany"]
	if germany == nil || !strings.Contains(germany["content"].(string), "two to three working days") {
		t.Errorf("no item of the section Shipping within Germany with its anchor: %v", keysOf(items))
	}
	skipped := map[string]string{}
	for _, p := range src["pages_read"].([]any) {
		p := p.(map[string]any)
		if p["status"] == "skipped" {
			skipped[p["url"].(string)], _ = p["reason"].(string)
		}
	}
	if !strings.Contains(skipped[site.URL+"/internal/stock"], "robots.txt") {
		t.Errorf("the disallowed page is not listed as skipped for robots.txt: %v", skipped)
	}
	if site.ok["/internal/stock"] != 0 {
		t.Error("the crawler requested a page robots.txt disallows")
	}

	// Another merchant sees nothing of the source.
	beta := map[string]string{"Authorization": e.ownerOf("beta")}
	for _, r := range []struct{ method, path string }{{http.MethodGet, ""}, {http.MethodDelete, ""}, {http.MethodPost, "/sync"}} {
		if got := e.do(r.method, "/api/v1/knowledge/sources/"+id+r.path, beta, ""); got.status != http.StatusNotFound {
			t.Errorf("beta %s the source%s: %d", r.method, r.path, got.status)
		}
	}
	if list := e.do(http.MethodGet, "/api/v1/knowledge/sources", beta, "").json(t)["data"].([]any); len(list) != 0 {
		t.Errorf("beta lists %d sources", len(list))
	}

	// A page changes, one is deleted: the re-sync rewrites and removes exactly those, and reads every other page
	// with a conditional request.
	site.mu.Lock()
	site.pages["/help/returns"] = `<h1>Returns</h1><p>You may return any unused item within 60 days of delivery for a full refund.</p>`
	delete(site.pages, "/help/article-3")
	clear(site.ok)
	site.notModified = 0
	site.mu.Unlock()
	before := items
	e.clock.Advance(time.Minute)
	if res := e.do(http.MethodPost, "/api/v1/knowledge/sources/"+id+"/sync", owner, ""); res.status != http.StatusAccepted {
		t.Fatalf("POST sync: %d %s", res.status, res.body)
	}
	src = waitSynced(t, e, id, src["last_synced_at"].(string))
	if src["status"] != "ready" {
		t.Fatalf("after the re-sync: %v", src)
	}
	site.mu.Lock()
	ok, notModified := maps(site.ok), site.notModified
	site.mu.Unlock()
	if len(ok) != 1 || ok["/help/returns"] == 0 { // read through its old address too, which redirects to it
		t.Errorf("full answers on re-sync: %v; want the changed page only", ok)
	}
	if want := 27; notModified != want { // "/", /help/shipping, 23 articles, the PDF and the Word document
		t.Errorf("%d pages answered 304, want %d", notModified, want)
	}
	after := sourceItems(t, e)
	if k := after[site.URL+"/help/returns"]; k == nil || !strings.Contains(k["content"].(string), "60 days") {
		t.Errorf("the changed page's item: %v", k)
	}
	if _, ok := after[site.URL+"/help/article-3"]; ok {
		t.Error("the deleted page's item is still there")
	}
	for url, k := range before {
		if url == site.URL+"/help/returns" || url == site.URL+"/help/article-3" {
			continue
		}
		if after[url] == nil || after[url]["id"] != k["id"] {
			t.Errorf("the item of unchanged %s was rewritten or lost", url)
		}
	}

	if res := e.do(http.MethodDelete, "/api/v1/knowledge/sources/"+id, owner, ""); res.status != http.StatusNoContent {
		t.Fatalf("DELETE source: %d", res.status)
	}
	left := e.do(http.MethodGet, "/api/v1/knowledge?limit=100", owner, "").json(t)["data"].([]any)
	if len(left) != 1 || left[0].(map[string]any)["title"] != "Gift wrapping" {
		t.Errorf("after deleting the source: %v; want the item typed by hand alone", left)
	}
}

func TestSourceBadInput(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha"), "Content-Type": "application/json"}
	for body, want := range map[string]string{
		`{}`:                            "url is required",
		`{"url":"ftp://shop.example/"}`: "http or https",
		`{"url":"https://shop.example/","type":"svn"}`:             "must be",
		`{"url":"https://shop.example/","ref":"main"}`:             `only a \"git\" source`,
		`{"url":"https://shop.example/","type":"git","ref":"a b"}`: "Git branch or tag",
		`{"url":"https://shop.example/","include":["help"]}`:       "path pattern",
		`{"url":"https://shop.example/","sync_interval":"5m"}`:     "plan's floor",
		`{"url":"https://shop.example/","sync_interval":"daily"}`:  "duration",
		`{"url":"https://shop.example/","max_pages":100000}`:       "pages per source",
	} {
		res := e.do(http.MethodPost, "/api/v1/knowledge/sources", owner, body)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), want) {
			t.Errorf("%s: %d %s; want 422 saying %q", body, res.status, res.body, want)
		}
	}
	for range 5 {
		if res := e.do(http.MethodPost, "/api/v1/knowledge/sources", owner, `{"url":"https://shop.example/"}`); res.status != http.StatusCreated {
			t.Fatalf("%d %s", res.status, res.body)
		}
	}
	if res := e.do(http.MethodPost, "/api/v1/knowledge/sources", owner, `{"url":"https://shop.example/"}`); res.status != http.StatusForbidden {
		t.Errorf("a sixth source on the default plan: %d %s", res.status, res.body)
	}
}

// sourceItems returns the merchant alpha's items by URL, those typed by hand left out.
func sourceItems(t *testing.T, e *env) map[string]map[string]any {
	t.Helper()
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	out := map[string]map[string]any{}
	path := "/api/v1/knowledge?limit=100"
	for {
		page := e.do(http.MethodGet, path, owner, "").json(t)
		for _, k := range page["data"].([]any) {
			k := k.(map[string]any)
			if k["source_id"] != nil {
				out[k["url"].(string)] = k
			}
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return out
		}
		path = "/api/v1/knowledge?limit=100&cursor=" + next
	}
}

func keysOf(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
