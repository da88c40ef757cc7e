package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// The lead export is every lead of the merchant, and never a cell a spreadsheet would run as a formula.
func TestLeadsExport(t *testing.T) {
	e := newEnv(t)
	_, conv := e.chat(t, "alpha", "Please write to jane@customer.example")
	// Leads of one millisecond are listed in no particular order (their IDs' random part decides): the form's comes
	// a millisecond later, so that "newest first" is one order.
	time.Sleep(2 * time.Millisecond)
	// A visitor's contact form whose name is a spreadsheet formula.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/api/v1/leads", strings.NewReader(
		`{"name": "=HYPERLINK(\"https://evil.example\")", "email": "mallory@customer.example", "message": "@SUM(1)", "consent": true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", e.secret["alpha"])
	lead, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = lead.Body.Close()
	if lead.StatusCode != http.StatusCreated {
		t.Fatalf("the contact form: %d", lead.StatusCode)
	}
	_, _ = e.chat(t, "beta", "beta's visitor is bob@customer.example")
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	res := c.get("/dashboard/leads.csv")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("the export: %d %v", res.StatusCode, res.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(res.Body)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("the export has %d rows (%v):\n%s", len(rows), err, res.Body)
	}
	// Newest first.
	if rows[2][3] != "jane@customer.example" || rows[2][8] != conv {
		t.Errorf("the chat's lead: %q", rows[2])
	}
	if rows[1][2] != `'=HYPERLINK("https://evil.example")` || rows[1][5] != "'@SUM(1)" {
		t.Errorf("the form's lead: %q", rows[1])
	}
	for _, row := range rows {
		for _, cell := range row {
			if strings.HasPrefix(cell, "=") || strings.HasPrefix(cell, "@") {
				t.Errorf("a cell starts a formula: %q", cell)
			}
		}
	}
	if strings.Contains(res.Body, "bob@") {
		t.Error("alpha's export holds beta's lead")
	}
	if page := c.get("/dashboard/leads"); !strings.Contains(page.Body, "jane@customer.example") {
		t.Error("the leads page does not list the lead")
	}
}

// Every page's JavaScript, the settings page's widget included, stays under 100 KB gzipped.
func TestPageScriptsBudget(t *testing.T) {
	const budget = 100 << 10
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	scripts := regexp.MustCompile(`<script src="([^"]+)"`)
	for _, page := range []string{"", "conversations", "knowledge", "leads", "webhooks", "settings"} {
		res := c.get("/dashboard/" + page)
		found := scripts.FindAllStringSubmatch(res.Body, -1)
		if res.StatusCode != http.StatusOK || len(found) == 0 {
			t.Fatalf("/dashboard/%s: %d, %d scripts", page, res.StatusCode, len(found))
		}
		total := 0
		for _, m := range found {
			var zipped bytes.Buffer
			zw := gzip.NewWriter(&zipped)
			_, _ = zw.Write([]byte(c.get(m[1]).Body))
			_ = zw.Close()
			total += zipped.Len()
		}
		t.Logf("/dashboard/%s: %d scripts, %d bytes gzipped", page, len(found), total)
		if total > budget {
			t.Errorf("/dashboard/%s: %d bytes of JavaScript gzipped, over %d", page, total, budget)
		}
	}
}

// While the merchant's owners run as many exports as they may, one more, of leads or knowledge, is refused with a
// page and Retry-After, and another merchant's owners still export.
func TestLeadsExportsAtOnceAreBounded(t *testing.T) {
	e := newEnv(t)
	_, _ = e.chat(t, "alpha", "Please write to jane@customer.example")
	alpha, _ := e.tenants.Merchant("alpha")
	started, release := make(chan struct{}), make(chan struct{})
	var running sync.WaitGroup
	for range chat.MaxExportsPerMerchant {
		running.Go(func() {
			_ = e.svc.ExportLeads(context.Background(), alpha, func(store.Lead) error {
				started <- struct{}{}
				<-release // a download its client reads slowly
				return nil
			})
		})
		<-started
	}
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	res := c.get("/dashboard/leads.csv")
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" ||
		!strings.Contains(res.Body, "already downloading as many exports") || res.Header.Get("Content-Disposition") != "" {
		t.Errorf("an export past the bound: %d %v", res.StatusCode, res.Header)
	}
	// A knowledge export is an export too.
	if res := c.get("/dashboard/knowledge/export/json"); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("a knowledge export past the bound: %d %v", res.StatusCode, res.Header)
	}
	b := newClient(t, e.url)
	b.signIn("beta@owners.example")
	if res := b.get("/dashboard/leads.csv"); res.StatusCode != http.StatusOK {
		t.Errorf("beta's export while alpha's run: %d", res.StatusCode)
	}
	close(release)
	running.Wait()
	if res := c.get("/dashboard/leads.csv"); res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "jane@customer.example") {
		t.Errorf("alpha's export once the others ended: %d", res.StatusCode)
	}
}

// A lead's address becomes a mailto: link that writes to that address alone: one stored before addresses were
// checked strictly, with mailto parameters in its local part, adds no recipient and no header.
func TestLeadsMailtoLinksAddNoRecipient(t *testing.T) {
	e := newEnv(t)
	const injected = "x?cc=evil%40attacker.example&body=hi@shop.example"
	at := time.Now().UTC().Truncate(time.Millisecond)
	lead := store.Lead{ID: "lead_injected", MerchantID: "alpha", Contact: store.Contact{Email: injected, Consent: true},
		Source: store.LeadFromForm, CreatedAt: at, UpdatedAt: at}
	// Written past chat, which would refuse the address today.
	if err := e.store.Write(t.Context(), func(tx store.Tx) error { return tx.InsertLead(t.Context(), lead) }); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	page := c.get("/dashboard/leads")
	links := regexp.MustCompile(`href="mailto:([^"]*)"`).FindAllStringSubmatch(page.Body, -1)
	if page.StatusCode != http.StatusOK || len(links) != 1 {
		t.Fatalf("the leads page: %d, mailto links %q", page.StatusCode, links)
	}
	if href := links[0][1]; strings.ContainsAny(href, "?#") || !strings.HasPrefix(href, "x%3Fcc") {
		t.Errorf("the lead's link is mailto:%s; want its address escaped whole, with no query", href)
	}
}
