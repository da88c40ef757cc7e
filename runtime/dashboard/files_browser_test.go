//go:build integration

package dashboard_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-dev/parley/internal/testutil/headless"
)

// TestKnowledgeFilesInBrowser adds files from the knowledge page as a merchant does: a scan is refused by name,
// a PDF becomes an item a page.
func TestKnowledgeFilesInBrowser(t *testing.T) {
	e := newEnv(t)
	ctx := headless.Start(t, 1280, 900, 90*time.Second)
	fixture := func(name string) string {
		p, err := filepath.Abs(filepath.Join("..", "ingest", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/knowledge"),
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/knowledge'`),
		bodyHas("Add files"),
		chromedp.SetUploadFiles("#upload-files", []string{fixture("care.txt"), fixture("scan.pdf")}),
		chromedp.Click(`form[action="/dashboard/knowledge/files"] button[type=submit]`),
		waitFor(`!!document.querySelector('#import-errors')`),
		bodyHas("scan.pdf: there is no text in it."),
		bodyHas("Nothing was added."),
	)
	if err != nil {
		t.Fatalf("adding a scan: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge-files-error.png")
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles("#upload-files", []string{fixture("tent-care.pdf")}),
		chromedp.SendKeys("#upload-url", "https://alpha.example/files/tent-care.pdf"),
		chromedp.Click(`form[action="/dashboard/knowledge/files"] button[type=submit]`),
		bodyHas("The files' items were added."),
		bodyHas("Tent care guide (page 2)"),
	)
	if err != nil {
		t.Fatalf("adding a PDF: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge-files.png")
	if n := e.knowledgeCount(t, "alpha"); n != 4 {
		t.Errorf("alpha has %d items, want 4", n)
	}
}
