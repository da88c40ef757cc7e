//go:build integration

package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-dev/parley/internal/testutil/headless"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/gitsource"
	"github.com/parley-dev/parley/runtime/gitsource/gittest"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestWebsitesInBrowser adds a website and a Git repository on the websites page as a merchant does, and follows
// their first syncs to the items they made.
func TestWebsitesInBrowser(t *testing.T) {
	e := newEnv(t)
	syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: e.svc, Tenants: e.tenants,
		Crawler: crawl.New(crawl.Config{AllowPrivate: true}), Git: gitsource.New(gitsource.Config{AllowPrivate: true}),
		Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go syncer.Run(t.Context())
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><nav><a href="/returns">Returns</a></nav><main><h1>Alpha Outdoor</h1><p>Tents, stoves and sleeping bags for every season, shipped from Hamburg.</p></main></body></html>`)
		case "/returns":
			fmt.Fprint(w, `<html><body><main><h1>Returns</h1><p>Return any unused item within 30 days for a full refund.</p></main></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	repo := gittest.New(t)
	repo.Commit(t, map[string]string{"docs/care.md": "# Tent care\n\nDry your tent before you pack it.\n"})

	ctx := headless.Start(t, 1280, 800, 90*time.Second)
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/sources"),
		// Each page is waited for until it has loaded: a node found while a redirect replaces the document is
		// gone by the time it is typed into ("Could not find node with given id", seen once in CI).
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email') && document.readyState === 'complete'`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/sources' && document.readyState === 'complete'`),
		bodyHas("No websites yet."),
		chromedp.SendKeys("#source-url", site.URL+"/"),
		chromedp.Click(`form[action="/dashboard/sources"] button[type=submit]`),
		bodyHas("The website was added: its first sync has started."),
		chromedp.SetValue("#source-type", "git"),
		chromedp.SendKeys("#source-url", repo.URL),
		chromedp.SendKeys("#source-ref", "main"),
		chromedp.Click(`form[action="/dashboard/sources"] button[type=submit]`),
		bodyHas("The repository was added: its first sync has started."),
	)
	if err != nil {
		t.Fatalf("adding a website and a repository: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := chromedp.Do(ctx, chromedp.Reload(), waitFor(`document.readyState === 'complete'`)); err != nil {
			t.Fatal(err)
		}
		ready, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
			`[...document.querySelectorAll('#sources tbody tr')].filter(r => r.innerText.includes('Ready')).length === 2 &&
			!document.body.innerText.includes('left out')`))
		if err != nil {
			t.Fatal(err)
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the syncs did not finish")
		}
		time.Sleep(200 * time.Millisecond)
	}
	saveScreenshot(ctx, t, "dashboard-websites.png")
	if n := e.knowledgeCount(t, "alpha"); n != 5 {
		t.Errorf("alpha has %d items, want its 2, the site's 2 and the repository's 1", n)
	}
}

// TestDeclaredWebsiteInBrowser shows a website declared as a KnowledgeSource as an owner sees it: kept in Git,
// with a sync button and no delete button.
func TestDeclaredWebsiteInBrowser(t *testing.T) {
	e := newEnv(t)
	m, ok := e.tenants.Merchant("alpha")
	if !ok {
		t.Fatal("no merchant alpha")
	}
	decl := *m
	decl.Sources = []tenant.Source{{ID: "help-centre", Generation: 1, Type: tenant.SourceWebsite, URL: "https://alpha.example/help/"}}
	if err := e.svc.ApplyDeclaredSources(t.Context(), &decl); err != nil {
		t.Fatal(err)
	}
	ctx := headless.Start(t, 1280, 800, 60*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/sources"),
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/sources'`),
		bodyHas("Kept in Git"),
	)
	if err != nil {
		t.Fatalf("the websites page: %v", err)
	}
	deletes, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('form[action$="/delete"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if deletes != 0 {
		t.Errorf("the declared website has %d delete buttons", deletes)
	}
	headless.Screenshot(ctx, t, "dashboard-declared-website.png")
}
