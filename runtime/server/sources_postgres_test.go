//go:build integration

package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
)

// TestSourceSyncsRunOnceAcrossReplicas runs two runtimes, each with its syncer, on one PostgreSQL database: every
// scheduled or requested sync of a merchant's sources is run by one of them, once (the site sees one robots.txt
// request a crawl), and the items are the same whichever ran it.
func TestSourceSyncsRunOnceAcrossReplicas(t *testing.T) {
	url := pg.Server(t).Database(t)
	var replicas []*env
	for range 2 {
		st, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		e := newEnv(t, func(c *envConfig) { c.chat.Store = st })
		syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: e.svc, Tenants: e.tenants,
			Crawler: crawl.New(crawl.Config{AllowPrivate: true}), Poll: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		go syncer.Run(t.Context())
		replicas = append(replicas, e)
	}
	site := newShopSite(t)
	var ids []string
	for _, start := range []string{"/", "/help/shipping", "/help/returns"} {
		res := replicas[0].do(http.MethodPost, "/api/v1/knowledge/sources", map[string]string{
			"Authorization": replicas[0].ownerOf("alpha"), "Content-Type": "application/json"}, `{"url":"`+site.URL+start+`"}`)
		if res.status != http.StatusCreated {
			t.Fatalf("POST source: %d %s", res.status, res.body)
		}
		ids = append(ids, res.json(t)["id"].(string))
	}
	waitAll := func(round int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			done := 0
			for _, id := range ids {
				src, err := replicas[0].svc.Store().GetSource(t.Context(), "alpha", id)
				if err != nil {
					t.Fatal(err)
				}
				if src.Status == store.SourceReady && src.LastSyncedAt.Equal(replicas[0].clock.Now()) {
					done++
				}
			}
			if done == len(ids) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("round %d: the syncs did not all finish", round)
	}
	waitAll(1)
	time.Sleep(200 * time.Millisecond) // a second run of a sync, if there were one, would have started by now
	site.mu.Lock()
	if site.robots != len(ids) {
		t.Errorf("%d crawls for %d scheduled syncs", site.robots, len(ids))
	}
	site.robots = 0
	site.mu.Unlock()

	// Requested through the other replica, at a later time: each again once.
	for _, e := range replicas {
		e.clock.Advance(time.Hour)
	}
	for _, id := range ids {
		res := replicas[1].do(http.MethodPost, "/api/v1/knowledge/sources/"+id+"/sync",
			map[string]string{"Authorization": replicas[1].ownerOf("alpha")}, "")
		if res.status != http.StatusAccepted {
			t.Fatalf("POST sync: %d %s", res.status, res.body)
		}
	}
	waitAll(2)
	time.Sleep(200 * time.Millisecond)
	site.mu.Lock()
	defer site.mu.Unlock()
	if site.robots != len(ids) {
		t.Errorf("%d crawls for %d requested syncs", site.robots, len(ids))
	}
}
