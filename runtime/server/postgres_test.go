//go:build integration

package server

import (
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/tenant"
)

// pg is the package's throwaway PostgreSQL, for the tests that run on both stores: started by the first of them.
var pg pgtest.Lazy

func init() { otherStores = append(otherStores, storeOption{name: "postgres", open: onPostgres}) }

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// onPostgres runs the env's use cases on a PostgreSQL store of its own instead of SQLite.
func onPostgres(t testing.TB) envOption {
	t.Helper()
	st, err := postgres.Open(t.Context(), pg.Server(t).Database(t))
	if err != nil {
		t.Fatalf("opening the PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return func(c *envConfig) { c.chat.Store = st }
}

// FuzzListQuery sends arbitrary query strings to the list and analytics endpoints on PostgreSQL, the stricter
// store: the answer is always a documented 200 or 4xx in the error envelope, never a 500 or a panic.
func FuzzListQuery(f *testing.F) {
	e := newEnv(f, onPostgres(f))
	e.addMerchant("fuzz", func(b *tenant.Bundle) {
		b.Plan.RequestsPerSecond, b.Plan.Burst, b.Plan.Webhooks = 100000, 100000, true
	})
	for _, seed := range []string{
		"", "limit=5", "limit=0", "cursor=%%%%zz", "cursor=a%00", "cursor=%ff", "q=shipping", "q=%00", "tag=a%00b",
		"has_lead=true", "from=0001-01-01", "from=2026-01-01&to=2026-02-01", "to=9999-12-31T23:59:59Z",
		"conversation_id=x%zz", "conversation_id=c-1", "webhook_id=%00", "status=failed", "event_type=lead.created",
		"a=1&a=2", "q=" + strings.Repeat("x", 300), "%", "&&&=", "from=2026-13-01",
	} {
		f.Add(seed)
	}
	owner := map[string]string{"Authorization": e.ownerOf("fuzz"), "X-Merchant-ID": "fuzz"}
	paths := []string{"/api/v1/conversations", "/api/v1/knowledge", "/api/v1/leads", "/api/v1/webhooks/deliveries", "/api/v1/analytics/overview"}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseRequestURI("/x?" + raw); err != nil || strings.ContainsAny(raw, " #\x7f") || strings.ContainsFunc(raw, unicode.IsControl) {
			return // not a query string an HTTP client can send
		}
		e.t = t
		for _, path := range paths {
			r := e.do(http.MethodGet, path+"?"+raw, owner, "")
			if r.status >= 500 {
				t.Fatalf("%s?%s: %d %s", path, raw, r.status, r.body)
			}
			if r.status != http.StatusOK && r.errorCode(t) == "" {
				t.Fatalf("%s?%s: no error code", path, raw)
			}
		}
	})
}

// FuzzKnowledgeBody sends arbitrary bodies to create a knowledge item on PostgreSQL, the stricter store: the
// answer is always a documented 201 or 4xx in the error envelope, never a 500 or a panic, and an item created
// reads back as the creation answered it, listed questions and status included (nothing half-written). The
// plan's ceilings are far off, so that each body is judged on its own.
func FuzzKnowledgeBody(f *testing.F) {
	e := newEnv(f, onPostgres(f))
	e.addMerchant("fuzz", func(b *tenant.Bundle) {
		b.Plan.RequestsPerSecond, b.Plan.Burst, b.Plan.KnowledgeItems, b.Plan.KnowledgeCharacters = 100000, 100000, 0, 0
	})
	for _, seed := range []string{
		`{"title": "Opening hours", "content": "9 to 5.", "tags": ["hours"], "questions": ["When do you close?"]}`,
		`{"title": "t", "content": "c\r\nd", "url": "https://shop.example/t", "questions": ["a\nb", "  c  "]}`,
		`{"title": "t", "content": "c", "questions": [""]}`, `{"title": "t", "content": "c", "questions": null}`,
		`{"title": "t", "content": "c", "questions": "q"}`, `{"title": "t", "content": "c", "questions": [1]}`,
		`{"title": "t", "content": "c", "questions": ["\u0000"]}`, `{"title": "", "content": ""}`, `{}`, `[]`, `null`,
		`{"title": "t", "content": "c", "extra": 1}`, `{"title": "t", "content": "` + "\xff" + `"}`,
		`{"title": "t", "content": "c", "status": "draft"}`, `{"title": "t", "content": "c", "status": "Draft"}`,
		`{"title": "t", "content": "c", "status": null}`, `{"title": "t", "content": "c", "status": 1}`,
	} {
		f.Add(seed)
	}
	owner := map[string]string{"Authorization": e.ownerOf("fuzz"), "X-Merchant-ID": "fuzz"}
	f.Fuzz(func(t *testing.T, body string) {
		e.t = t
		r := e.do(http.MethodPost, "/api/v1/knowledge", owner, body)
		if r.status >= 500 {
			t.Fatalf("body %q: %d %s", body, r.status, r.body)
		}
		if r.status != http.StatusCreated {
			if r.errorCode(t) == "" {
				t.Fatalf("body %q: %d without an error code", body, r.status)
			}
			return
		}
		created := r.json(t)
		got := e.do(http.MethodGet, "/api/v1/knowledge/"+url.PathEscape(created["id"].(string)), owner, "")
		if got.status != http.StatusOK || !reflect.DeepEqual(got.json(t), created) {
			t.Fatalf("body %q: created %s, reads back %d %s", body, r.body, got.status, got.body)
		}
	})
}
