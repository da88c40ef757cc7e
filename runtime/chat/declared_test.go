package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/tenant"
)

// TestDeclaredSourceRefusal: a declared source is stored unless its type is not read yet, the plan refuses its
// spec as it would the API's, or the plan's sources are all used by others; a source already stored keeps its
// place under the limit.
func TestDeclaredSourceRefusal(t *testing.T) {
	plan := tenant.Plan{KnowledgeSources: 2, PagesPerSource: 100, MinSourceSyncSeconds: 3600}
	site := tenant.Source{ID: "help", Generation: 1, Type: tenant.SourceWebsite, URL: "https://shop.example/help/",
		Include: []string{"/help/*"}, MaxPages: 50, SyncIntervalSeconds: 7200}
	with := func(edit func(*tenant.Source)) tenant.Source {
		s := site
		edit(&s)
		return s
	}
	cases := []struct {
		name   string
		src    tenant.Source
		stored bool
		used   int
		want   string
	}{
		{"a website", site, false, 1, ""},
		{"the plan's pages and the default interval", with(func(s *tenant.Source) { s.MaxPages, s.SyncIntervalSeconds = 0, 0 }), false, 0, ""},
		{"git", with(func(s *tenant.Source) { s.Type, s.Ref = tenant.SourceGit, "main" }), false, 0, ""},
		{"a ref on a website", with(func(s *tenant.Source) { s.Ref = "main" }), false, 0, "ref"},
		{"more pages than the plan", with(func(s *tenant.Source) { s.MaxPages = 101 }), false, 0, "maxPages must be at most 100"},
		{"more often than the plan", with(func(s *tenant.Source) { s.SyncIntervalSeconds = 600 }), false, 0, "syncInterval must be between 1h0m0s"},
		{"a bad pattern", with(func(s *tenant.Source) { s.Exclude = []string{"no-slash"} }), false, 0, "exclude[0]"},
		{"no room", site, false, 2, "allows 2 knowledge sources"},
		{"stored, at the limit", site, true, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, why := declaredSourceRefusal(tc.src, plan, tc.stored, tc.used)
			if tc.want == "" {
				if why != "" {
					t.Fatalf("refused: %s", why)
				}
				if src.URL != tc.src.URL || src.MaxPages == 0 || src.SyncInterval < time.Hour {
					t.Errorf("the source to store: %+v", src)
				}
				return
			}
			if !strings.Contains(why, tc.want) {
				t.Errorf("refusal %q, want one saying %q", why, tc.want)
			}
		})
	}
}
