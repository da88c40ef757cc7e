package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestDeclaredSources: the sources a merchant's bundle declares (its KnowledgeSources) are created and synced by
// the syncer, shown by the API as declared, refused with 409 when the API deletes one, never reached by another
// merchant, reported to the operator with their last sync, and deleted with their items once the bundle no longer
// declares them. A Git source is stored as well; this syncer has no Git reader, so its sync is reported failed.
func TestDeclaredSources(t *testing.T) {
	e := newEnv(t)
	site := newShopSite(t)
	syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: e.svc, Tenants: e.tenants,
		Crawler: crawl.New(crawl.Config{AllowPrivate: true}), Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go syncer.Run(t.Context())
	alpha := *e.bundles["alpha"]
	alpha.Sources = []tenant.Source{
		{ID: "help", Generation: 1, Type: tenant.SourceWebsite, URL: site.URL + "/", SyncIntervalSeconds: 86400},
		{ID: "docs", Generation: 1, Type: tenant.SourceGit, URL: "https://git.example/docs.git", Ref: "main"},
		{ID: "too-often", Generation: 1, Type: tenant.SourceWebsite, URL: site.URL + "/", SyncIntervalSeconds: 60},
	}
	e.publish(&alpha)

	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := e.store.GetSource(t.Context(), "alpha", "help"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the declared source was not created: %v", err)
		}
	}
	src := waitSynced(t, e, "help", "")
	if src["status"] != "ready" || src["declared"] != true || src["id"] != "help" {
		t.Fatalf("the declared source after its sync: %v", src)
	}
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	if r := e.do(http.MethodDelete, "/api/v1/knowledge/sources/help", owner, ""); r.status != http.StatusConflict ||
		r.errorCode(t) != codeSourceDeclared {
		t.Errorf("DELETE of a declared source: %d %s, want 409 %s", r.status, r.body, codeSourceDeclared)
	}
	other := map[string]string{"Authorization": e.ownerOf("beta")}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if r := e.do(method, "/api/v1/knowledge/sources/help", other, ""); r.status != http.StatusNotFound {
			t.Errorf("%s of alpha's declared source by beta: %d %s, want 404", method, r.status, r.body)
		}
	}
	items := sourceItemCount(t, e, "help")
	if items == 0 {
		t.Fatal("the declared source made no items")
	}

	report, err := e.svc.UsageReport(t.Context(), e.tenants.All())
	if err != nil {
		t.Fatal(err)
	}
	got := report.Merchants["alpha"].Sources
	if h := got["help"]; h.SyncedGeneration != 1 || h.LastOutcome != store.SourceReady || h.Items != items || h.LastSyncedAt == nil {
		t.Errorf("the report of the synced source: %+v (items %d)", h, items)
	}
	if d := got["docs"]; d.Status != store.SourceFailed || d.SyncedGeneration != 1 || !strings.Contains(d.Error, "Git") {
		t.Errorf("the report of the Git source: %+v", d)
	}
	if d := got["too-often"]; d.LastOutcome != store.SourceFailed || !strings.Contains(d.Error, "syncInterval") {
		t.Errorf("the report of a source syncing more often than the plan allows: %+v", d)
	}
	if _, err := e.store.GetSource(t.Context(), "alpha", "docs"); err != nil {
		t.Errorf("the Git source was not stored: %v", err)
	}
	if len(report.Merchants["beta"].Sources) != 0 {
		t.Errorf("beta's report holds sources: %+v", report.Merchants["beta"].Sources)
	}

	// Asked after the counts above, so that the sync it starts cannot change them.
	if r := e.do(http.MethodPost, "/api/v1/knowledge/sources/help/sync", owner, ""); r.status != http.StatusAccepted {
		t.Errorf("a sync of a declared source asked through the API: %d %s", r.status, r.body)
	}

	// The KnowledgeSource deleted: its source goes with its items, and the items typed by hand stay.
	alpha.Sources = nil
	e.publish(&alpha)
	deadline := time.Now().Add(10 * time.Second)
	for e.do(http.MethodGet, "/api/v1/knowledge/sources/help", owner, "").status != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("the source of a KnowledgeSource no longer declared is still there")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if left := sourceItems(t, e); len(left) != 0 {
		t.Errorf("%d items of the deleted source are left", len(left))
	}
}

// sourceItemCount counts alpha's items made by the source id; sourceItems keys them by URL, under which a
// document's sections may share one.
func sourceItemCount(t *testing.T, e *env, id string) int {
	t.Helper()
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	n, path := 0, "/api/v1/knowledge?limit=100"
	for {
		page := e.do(http.MethodGet, path, owner, "").json(t)
		for _, k := range page["data"].([]any) {
			if k.(map[string]any)["source_id"] == id {
				n++
			}
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return n
		}
		path = "/api/v1/knowledge?limit=100&cursor=" + next
	}
}
