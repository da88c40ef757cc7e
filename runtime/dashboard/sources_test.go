package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

func TestWebsitesForm(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	for _, tc := range []struct {
		form   url.Values
		status int
		want   string
	}{
		{url.Values{"url": {""}}, http.StatusUnprocessableEntity, "Enter the website&#39;s address."},
		{url.Values{"url": {"ftp://alpha.example/"}}, http.StatusUnprocessableEntity, "whole http or https address"},
		{url.Values{"url": {"https://alpha.example/"}, "sync_interval": {"5m"}}, http.StatusUnprocessableEntity, "The interval must be between 1h and 720h."},
		{url.Values{"url": {"https://alpha.example/"}, "type": {"svn"}}, http.StatusUnprocessableEntity, "Choose a website or a Git repository."},
		{url.Values{"url": {"https://git.example/docs.git"}, "type": {"git"}, "ref": {"a b"}}, http.StatusUnprocessableEntity, "must be a Git branch or tag name"},
	} {
		tc.form.Set("csrf", c.csrf())
		if res := c.post("/dashboard/sources", tc.form); res.StatusCode != tc.status || !strings.Contains(res.Body, tc.want) {
			t.Errorf("%v: %d, want %d with %q", tc.form, res.StatusCode, tc.status, tc.want)
		}
	}
	res := c.post("/dashboard/sources", url.Values{"csrf": {c.csrf()}, "url": {"https://alpha.example/help/"}, "sync_interval": {"24h"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("adding a website: %d %s", res.StatusCode, res.Body)
	}
	page := c.get("/dashboard/sources?ok=source-added")
	if !strings.Contains(page.Body, "https://alpha.example/help/") || !strings.Contains(page.Body, "every 24h") {
		t.Fatalf("the websites page: %s", page.Body)
	}
	// A Git repository, with its branch; a website's form keeps no branch.
	res = c.post("/dashboard/sources", url.Values{"csrf": {c.csrf()}, "type": {"git"}, "url": {"https://git.example/docs.git"},
		"ref": {"main"}, "sync_interval": {"24h"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("adding a Git repository: %d %s", res.StatusCode, res.Body)
	}
	if page := c.get("/dashboard/sources"); !strings.Contains(page.Body, "Git repository · main · every 24h") {
		t.Fatalf("the Git repository on the page: %s", page.Body)
	}
	list, err := e.svc.Store().ListSources(t.Context(), "alpha")
	if err != nil || len(list) != 2 || list[0].Type != "git" || list[0].Ref != "main" || list[1].Ref != "" {
		t.Fatalf("alpha's sources: %+v, %v", list, err)
	}
	if res := c.post("/dashboard/sources/"+list[0].ID+"/delete", url.Values{"csrf": {c.csrf()}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("deleting the repository: %d", res.StatusCode)
	}
	list, err = e.svc.Store().ListSources(t.Context(), "alpha")
	if err != nil || len(list) != 1 {
		t.Fatalf("alpha's sources: %v, %v", list, err)
	}

	// Another merchant's owner can neither sync nor delete it.
	b := newClient(t, e.url)
	b.signIn("beta@owners.example")
	for _, action := range []string{"sync", "delete"} {
		if res := b.post("/dashboard/sources/"+list[0].ID+"/"+action, url.Values{"csrf": {b.csrf()}}); res.StatusCode != http.StatusNotFound {
			t.Errorf("beta's %s of alpha's website: %d", action, res.StatusCode)
		}
	}
	if res := c.post("/dashboard/sources/"+list[0].ID+"/delete", url.Values{"csrf": {c.csrf()}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("deleting the website: %d", res.StatusCode)
	}
	if list, _ := e.svc.Store().ListSources(t.Context(), "alpha"); len(list) != 0 {
		t.Errorf("alpha still has %d websites", len(list))
	}
}

// TestDeclaredWebsite: a website declared as a KnowledgeSource (through the bundle) is listed as kept in Git,
// without a Delete button, and a delete posted anyway is refused with 409 and left in place.
func TestDeclaredWebsite(t *testing.T) {
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
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	page := c.get("/dashboard/sources")
	if !strings.Contains(page.Body, "https://alpha.example/help/") || !strings.Contains(page.Body, "Kept in Git") ||
		strings.Contains(page.Body, "/dashboard/sources/help-centre/delete") {
		t.Fatalf("the websites page with a declared website: %s", page.Body)
	}
	if res := c.post("/dashboard/sources/help-centre/delete", url.Values{"csrf": {c.csrf()}}); res.StatusCode != http.StatusConflict ||
		!strings.Contains(res.Body, "KnowledgeSource") {
		t.Errorf("deleting a declared website: %d %s", res.StatusCode, res.Body)
	}
	if _, err := e.svc.Store().GetSource(t.Context(), "alpha", "help-centre"); err != nil {
		t.Errorf("the declared website after the refused delete: %v", err)
	}
}
