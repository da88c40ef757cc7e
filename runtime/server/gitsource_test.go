package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/gitsource"
	"github.com/parley-dev/parley/runtime/gitsource/gittest"
)

// TestGitSourceEndToEnd syncs a real repository served over smart HTTP: its Markdown in scope becomes items
// linked to their files and sections, and after a change and a deletion a re-sync rewrites and removes exactly
// those.
func TestGitSourceEndToEnd(t *testing.T) {
	e := newEnv(t)
	repo := gittest.New(t)
	repo.Commit(t, map[string]string{
		"README.md":         "# Shop docs\n\nHow we write these pages.\n",
		"docs/returns.md":   "# Returns\n\n## Within 30 days\n\nYou may return any unused mug within 30 days of delivery.\n",
		"docs/shipping.mdx": "import Note from './note'\n\n# Shipping\n\nOrders within Germany arrive in two to three working days.\n",
		"docs/care.md":      "# Care\n\nEvery plate is dishwasher safe.\n",
		"docs/gift.txt":     "We wrap gifts for three euros.\n",
	})
	syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: e.svc, Tenants: e.tenants, Poll: 50 * time.Millisecond,
		Crawler: crawl.New(crawl.Config{AllowPrivate: true}), Git: gitsource.New(gitsource.Config{AllowPrivate: true})})
	if err != nil {
		t.Fatal(err)
	}
	go syncer.Run(t.Context())
	owner := map[string]string{"Authorization": e.ownerOf("alpha"), "Content-Type": "application/json"}
	res := e.do(http.MethodPost, "/api/v1/knowledge/sources", owner,
		`{"type":"git","url":"`+repo.URL+`","ref":"main","include":["/docs/**"],"sync_interval":"24h"}`)
	if res.status != http.StatusCreated {
		t.Fatalf("POST source: %d %s", res.status, res.body)
	}
	created := res.json(t)
	id := created["id"].(string)
	if created["type"] != "git" || created["ref"] != "main" || created["status"] != "pending" {
		t.Errorf("the source created: %v", created)
	}
	src := waitSynced(t, e, id, "")
	if src["status"] != "ready" || src["error"] != "" || src["pages"] != float64(4) {
		t.Fatalf("after the first sync: %v", src)
	}
	items := sourceItems(t, e)
	returns := items[repo.URL+"/docs/returns.md#within-30-days"]
	if returns == nil || !strings.Contains(returns["content"].(string), "30 days") || returns["source_id"] != id {
		t.Errorf("no item of the section Within 30 days linked to it: %v", keysOf(items))
	}
	for url := range items {
		if strings.Contains(url, "README") {
			t.Errorf("a file outside the include patterns became an item: %s", url)
		}
	}
	if k := items[repo.URL+"/docs/shipping.mdx#shipping"]; k == nil || !strings.Contains(k["content"].(string), "two to three") {
		t.Errorf("the MDX file's item: %v (%v)", k, keysOf(items))
	}

	// A file changes, one is deleted: the re-sync fetches once, rewrites the changed file's items, removes the
	// deleted file's and keeps every other item as it was.
	repo.Commit(t, map[string]string{
		"docs/returns.md": "# Returns\n\n## Within 60 days\n\nYou may return any unused mug within 60 days of delivery.\n",
		"docs/care.md":    "",
	})
	fetches := repo.Fetches.Load()
	e.clock.Advance(time.Minute)
	if res := e.do(http.MethodPost, "/api/v1/knowledge/sources/"+id+"/sync", owner, ""); res.status != http.StatusAccepted {
		t.Fatalf("POST sync: %d %s", res.status, res.body)
	}
	src = waitSynced(t, e, id, src["last_synced_at"].(string))
	if src["status"] != "ready" || src["pages"] != float64(3) {
		t.Fatalf("after the re-sync: %v", src)
	}
	if n := repo.Fetches.Load() - fetches; n != 1 {
		t.Errorf("%d fetches for one sync", n)
	}
	after := sourceItems(t, e)
	if k := after[repo.URL+"/docs/returns.md#within-60-days"]; k == nil || !strings.Contains(k["content"].(string), "60 days") {
		t.Errorf("the changed file's item: %v", keysOf(after))
	}
	for url, k := range items {
		switch {
		case strings.Contains(url, "/docs/returns.md"), strings.Contains(url, "/docs/care.md"):
			if after[url] != nil {
				t.Errorf("the item %s of a changed or deleted file is still there", url)
			}
		case after[url] == nil || after[url]["id"] != k["id"]:
			t.Errorf("the item of unchanged %s was rewritten or lost", url)
		}
	}
}

// TestGitSourceFailure shows a repository that cannot be read as the source's error, its items left in place.
func TestGitSourceFailure(t *testing.T) {
	e := newEnv(t)
	syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: e.svc, Tenants: e.tenants, Poll: 50 * time.Millisecond,
		Crawler: crawl.New(crawl.Config{}), Git: gitsource.New(gitsource.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	go syncer.Run(t.Context())
	repo := gittest.New(t)
	repo.Commit(t, map[string]string{"a.md": "# A\n\nFirst.\n"})
	owner := map[string]string{"Authorization": e.ownerOf("alpha"), "Content-Type": "application/json"}
	for url, want := range map[string]string{
		strings.Replace(repo.URL, "http:", "https:", 1): "loopback",
		repo.URL: "HTTPS",
	} {
		res := e.do(http.MethodPost, "/api/v1/knowledge/sources", owner, `{"type":"git","url":"`+url+`"}`)
		if res.status != http.StatusCreated {
			t.Fatalf("POST source: %d %s", res.status, res.body)
		}
		src := waitSynced(t, e, res.json(t)["id"].(string), "")
		if src["status"] != "failed" || !strings.Contains(src["error"].(string), want) {
			t.Errorf("%s: %v; want a failed sync saying %q", url, src, want)
		}
	}
	if repo.Fetches.Load() != 0 {
		t.Error("a forbidden repository was fetched")
	}
}
