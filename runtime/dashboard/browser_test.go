//go:build integration

package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/headless"
)

// waitFor polls a page expression until it is true, across the page loads a form post or a redirect causes.
func waitFor(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		deadline := time.Now().Add(15 * time.Second)
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, t)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			if time.Now().After(deadline) {
				return chromedp.Void{}, fmt.Errorf("waiting for %s (last error: %v)", expr, err) //nolint:errorlint // err may be nil
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, ctx.Err()
			case <-time.After(30 * time.Millisecond):
			}
		}
	}
}

// bodyHas waits until the page's text contains s.
func bodyHas(s string) chromedp.Action[chromedp.Void] {
	return waitFor(fmt.Sprintf(`document.body && document.body.innerText.includes(%q)`, s))
}

// run evaluates JavaScript for its effect.
func run(js string) chromedp.Action[chromedp.Void] {
	ev := chromedp.Evaluate[bool]("(" + js + ", true)")
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := ev(ctx, t)
		return chromedp.Void{}, err
	}
}

// The whole dashboard as a merchant uses it, in a real browser: sign in at the dev issuer, see the conversation
// just held through the API, add an item and get it answered, import a CSV with a bad row, replay a delivery.
func TestDashboardInBrowser(t *testing.T) {
	e := newEnv(t)
	_, conv := e.chat(t, "alpha", "How long does delivery to Canada take?")
	_, _ = e.chat(t, "alpha", "Can I pay with bitcoin?")
	_, _ = e.chat(t, "beta", "=HYPERLINK(1) please write to jane@customer.example")
	ctx := headless.Start(t, 1280, 900, 90*time.Second)

	// Sign in: the dashboard sends the browser to the issuer, which sends it back signed in.
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/"),
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/'`),
		bodyHas("Shop alpha"),
		bodyHas("2 of 50 conversations used this month"),
		bodyHas("2 of 5 knowledge items"),
		bodyHas("can i pay with bitcoin"), // unanswered
		// The first Tab reaches the link past the navigation.
		chromedp.KeyEvent(kb.Tab),
		waitFor(`document.activeElement.classList.contains('skip') && document.activeElement.getAttribute('href') === '#main'`),
	)
	if err != nil {
		t.Fatalf("signing in: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-overview.png")

	// The conversation just held is listed, and its detail shows the answer and its source.
	err = chromedp.Do(ctx,
		chromedp.Click(`nav.main a[href="/dashboard/conversations"]`),
		bodyHas("How long does delivery to Canada take?"),
	)
	if err != nil {
		t.Fatalf("conversations: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-conversations.png")
	err = chromedp.Do(ctx,
		chromedp.Click(`a[href="/dashboard/conversations/`+conv+`"]`),
		bodyHas("5 to 8 business days"),
		waitFor(`[...document.querySelectorAll('.sources a')].some(a => a.textContent === 'Shipping alpha')`),
	)
	if err != nil {
		t.Fatalf("a conversation: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-conversation.png")

	// A reply without an answer lists the items it linked instead, as such.
	_, suggested := e.chat(t, "alpha", "do you ship to mexico")
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/conversations/"+suggested),
		bodyHas("not answered"),
		waitFor(`[...document.querySelectorAll('.sources')].some(p => p.textContent.startsWith('Suggested instead: ') && p.textContent.includes('Shipping alpha'))`),
	)
	if err != nil {
		t.Fatalf("a conversation with suggestions: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-conversation-suggested.png")

	// An unanswered question of the overview leads to the knowledge page, which offers to answer it.
	err = chromedp.Do(ctx,
		chromedp.Click(`nav.main a[href="/dashboard/"]`),
		waitFor(`!!document.querySelector('#unanswered-h')`),
		chromedp.Click(`a[href^="/dashboard/knowledge?question=can%20i%20pay"]`),
		waitFor(`!!document.querySelector('#answer')`),
		bodyHas("Answer “can i pay with bitcoin”"),
		waitFor(`document.querySelector('#k-questions').value === 'can i pay with bitcoin'`),
	)
	if err != nil {
		t.Fatalf("answering an unanswered question: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge-answer.png")

	// An item added in the dashboard answers the next visitor, who asks one of the questions listed for it in
	// words the item itself does not use.
	err = chromedp.Do(ctx,
		chromedp.Click(`nav.main a[href="/dashboard/knowledge"]`),
		waitFor(`!!document.querySelector('#k-title')`),
		chromedp.SendKeys("#k-title", "Gift cards"),
		chromedp.SendKeys("#k-content", "Gift cards never expire and can be used in every alpha store."),
		chromedp.SendKeys("#k-tags", "payments, gifts"),
		chromedp.SendKeys("#k-questions", "Can I buy a voucher as a present?\nDo gift cards expire?"),
	)
	if err != nil {
		t.Fatalf("filling in an item: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge-item-form.png")
	err = chromedp.Do(ctx,
		chromedp.Click(`form.item button[type=submit]`),
		bodyHas("The item was added."),
		bodyHas("3 of 5 knowledge items"),
	)
	if err != nil {
		t.Fatalf("adding an item: %v", err)
	}
	// In the widget on alpha's shop, in a second tab.
	shopCtx, closeShop := chromedp.NewContext(ctx)
	var answer string
	err = chromedp.Do(shopCtx,
		chromedp.Navigate(e.shop),
		waitFor(`(() => { const h = document.querySelector('[data-parley]'); return !!(h && h.shadowRoot && h.shadowRoot.querySelector('.l')); })()`),
		run(`document.querySelector('[data-parley]').shadowRoot.querySelector('.l').click()`),
		waitFor(`document.querySelector('[data-parley]').shadowRoot.activeElement === document.querySelector('[data-parley]').shadowRoot.querySelector('textarea')`),
		chromedp.KeyEvent("can I buy a voucher as a present"),
		chromedp.KeyEvent(kb.Enter),
		waitFor(`document.querySelector('[data-parley]').shadowRoot.querySelectorAll('.m.bot').length === 2`),
		waitFor(`document.querySelector('[data-parley]').shadowRoot.querySelector('.t').offsetParent === null`),
	)
	if err == nil {
		answer, err = chromedp.Run(shopCtx, chromedp.Evaluate[string](`document.querySelector('[data-parley]').shadowRoot.querySelectorAll('.m.bot')[1].textContent`))
	}
	if err != nil || !strings.Contains(answer, "never expire") {
		t.Errorf("the new item did not answer in the widget: %q %v", answer, err)
	}

	// Kept as a draft, it is marked in the list and answers no more.
	toggleDraft := func(listed string) error { // ticks or unticks the item's draft box and saves it
		return chromedp.Do(ctx,
			run(`[...document.querySelectorAll('table.list a')].find(a => a.textContent === 'Gift cards').click()`),
			waitFor(`!!document.querySelector('#k-draft')`),
			chromedp.Click(`#k-draft`),
			chromedp.Click(`form.item button[type=submit]`),
			bodyHas("The item was saved."),
			waitFor(`[...document.querySelectorAll('table.list td')].some(td => td.textContent === '`+listed+`')`),
		)
	}
	if err := toggleDraft("Gift cards Draft"); err != nil {
		t.Fatalf("keeping an item as a draft: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge-draft.png")
	err = chromedp.Do(shopCtx,
		chromedp.KeyEvent("can I buy a voucher as a present"),
		chromedp.KeyEvent(kb.Enter),
		waitFor(`document.querySelector('[data-parley]').shadowRoot.querySelectorAll('.m.bot').length === 3`),
		waitFor(`document.querySelector('[data-parley]').shadowRoot.querySelector('.t').offsetParent === null`),
	)
	if err == nil {
		answer, err = chromedp.Run(shopCtx, chromedp.Evaluate[string](`document.querySelector('[data-parley]').shadowRoot.querySelectorAll('.m.bot')[2].textContent`))
	}
	if err != nil || strings.Contains(answer, "never expire") {
		t.Errorf("a draft answered in the widget: %q %v", answer, err)
	}
	closeShop()
	if err := toggleDraft("Gift cards"); err != nil { // published again, for the preview below
		t.Fatalf("publishing a draft: %v", err)
	}

	// A CSV with one bad row: the row is named, nothing is imported.
	csvFile := filepath.Join(t.TempDir(), "items.csv")
	if err := os.WriteFile(csvFile, []byte("title,content,url,tags\nOpening hours,We are open 9 to 5.,,\nNo content,,,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles("#import-file", []string{csvFile}),
		chromedp.Click(`form[action="/dashboard/knowledge/import"] button[type=submit]`),
		waitFor(`!!document.querySelector('#import-errors')`),
		bodyHas("Line 3: the content is missing"),
		bodyHas("Nothing was imported."),
	)
	if err != nil {
		t.Fatalf("importing a bad CSV: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge-import-error.png")
	if n := e.knowledgeCount(t, "alpha"); n != 3 {
		t.Errorf("after the failed import alpha has %d items, want 3", n)
	}

	// The webhook log lists the deliveries; replaying one sends it again.
	delivered := e.delivery(t, "alpha")
	before := e.received()
	err = chromedp.Do(ctx,
		chromedp.Click(`nav.main a[href="/dashboard/webhooks"]`),
		bodyHas("conversation.created"),
	)
	if err != nil {
		t.Fatalf("the delivery log: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-webhooks.png")
	err = chromedp.Do(ctx,
		chromedp.Click(`form[action="/dashboard/webhooks/`+delivered.ID+`/replay"] button`),
		bodyHas("The delivery was queued to be sent again."),
	)
	if err != nil {
		t.Fatalf("replaying: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.received() == before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if e.received() == before {
		t.Error("the replayed delivery never arrived")
	}

	// "Send a test event": a signed webhook.test reaches the endpoint, though it subscribes only to
	// conversation.created, and its delivery is in the log.
	events := len(e.hooks.Received())
	err = chromedp.Do(ctx,
		chromedp.Click(`form[action="/dashboard/webhooks/endpoints/crm/test"] button`),
		bodyHas("A test event was queued for the endpoint"),
	)
	if err != nil {
		t.Fatalf("sending a test event: %v", err)
	}
	e.hooks.WaitFor(t, events+1, 10*time.Second)
	if e.hooks.Bad() != 0 {
		t.Errorf("%d deliveries did not verify", e.hooks.Bad())
	}
	test := e.delivery(t, "alpha")
	if test.EventType != "webhook.test" {
		t.Fatalf("the newest delivery is %s, want webhook.test", test.EventType)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/webhooks"),
		waitFor(`[...document.querySelectorAll('table.list tbody tr')].some(r => r.textContent.includes('webhook.test') && r.querySelector('.status.succeeded'))`),
		waitFor(`!!document.querySelector('form[action="/dashboard/webhooks/`+test.ID+`/replay"]')`),
	)
	if err != nil {
		t.Fatalf("the test event in the log: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-webhooks-test-event.png")

	// In this order: the key is created on the settings page, where the loop ends.
	for _, p := range []struct{ page, shows string }{
		{"leads", "Download all leads as CSV"}, {"settings", "Embed the widget"},
	} {
		if err := chromedp.Do(ctx, chromedp.Click(`nav.main a[href="/dashboard/`+p.page+`"]`),
			waitFor(`location.pathname === '/dashboard/`+p.page+`'`), bodyHas(p.shows)); err != nil {
			t.Fatalf("%s: %v", p.page, err)
		}
		saveScreenshot(ctx, t, "dashboard-"+p.page+".png")
	}
	// The live preview is the real widget, in alpha's look, answering from alpha's knowledge under the
	// dashboard's Content-Security-Policy, and storing nothing.
	conversations, err := e.store.ConversationsThisMonth(t.Context(), "alpha", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const shadow = `document.querySelector('[data-parley]').shadowRoot`
	var previewAnswer string
	err = chromedp.Do(ctx,
		waitFor(`(() => { const h = document.querySelector('[data-parley]'); return !!(h && h.shadowRoot && h.shadowRoot.querySelector('.l')); })()`),
		run(shadow+`.querySelector('.l').click()`),
		waitFor(shadow+`.querySelector('header h2').textContent === 'Ask alpha'`),
		waitFor(shadow+`.activeElement === `+shadow+`.querySelector('textarea')`),
		chromedp.KeyEvent("Do gift cards expire?"),
		chromedp.KeyEvent(kb.Enter),
		waitFor(shadow+`.querySelectorAll('.m.bot').length === 2`),
	)
	if err == nil {
		previewAnswer, err = chromedp.Run(ctx, chromedp.Evaluate[string](shadow+`.querySelectorAll('.m.bot')[1].textContent`))
	}
	if err != nil || !strings.Contains(previewAnswer, "never expire") {
		t.Fatalf("the live preview: %q %v", previewAnswer, err)
	}
	saveScreenshot(ctx, t, "dashboard-settings-preview.png")
	if n, err := e.store.ConversationsThisMonth(t.Context(), "alpha", time.Now()); err != nil || n != conversations {
		t.Errorf("the preview stored a conversation: %d, before %d (%v)", n, conversations, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/settings"), bodyHas("Embed the widget")); err != nil {
		t.Fatal(err)
	}
	// A secret key created in the settings works on the API, shown once; revoked, it stops within 2 seconds.
	var key string
	err = chromedp.Do(ctx,
		chromedp.SetValue(`select[name=type]`, "secret"),
		chromedp.Click(`form[action="/dashboard/keys"] button`),
		waitFor(`!!document.querySelector('#new-key')`),
	)
	if err == nil {
		key, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#new-key').textContent.trim()`))
	}
	if err != nil || !strings.HasPrefix(key, "sk_") {
		t.Fatalf("creating a key: %q %v", key, err)
	}
	saveScreenshot(ctx, t, "dashboard-key-created.png")
	if status, answer, _ := e.chatWith(t, key, "How long does delivery to Canada take?"); status != http.StatusOK || !strings.Contains(answer, "5 to 8") {
		t.Fatalf("the new key on the API: %d %q", status, answer)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(`a[href="/dashboard/settings#keys-h"]`),
		waitFor(`!!document.querySelector('#own-keys form[action$="/revoke"]')`),
		bodyHas("never"), // declared keys; the new key's last use shows after the next page load
		run(`window.confirm = () => true`),
		chromedp.Click(`#own-keys form[action$="/revoke"] button`),
		bodyHas("The key was revoked"),
	)
	if err != nil {
		t.Fatalf("revoking the key: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-settings-keys.png")
	revoked := time.Now()
	for {
		status, _, _ := e.chatWith(t, key, "Still there?")
		if status == http.StatusUnauthorized {
			break
		}
		if time.Since(revoked) > 2*time.Second {
			t.Fatalf("the revoked key still answers %d after 2 seconds", status)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := chromedp.Do(ctx, chromedp.Click(`nav.main a[href="/dashboard/knowledge"]`), bodyHas("Gift cards")); err != nil {
		t.Fatal(err)
	}
	saveScreenshot(ctx, t, "dashboard-knowledge.png")

	// German, chosen on the page, and kept.
	err = chromedp.Do(ctx,
		chromedp.Click(`nav.lang a[lang="de"]`),
		bodyHas("Wissen"),
		chromedp.Click(`nav.main a[href="/dashboard/"]`),
		bodyHas("5 von 50 Unterhaltungen in diesem Monat genutzt"), // three before, the widget's and the new key's
	)
	if err != nil {
		t.Fatalf("in German: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-overview-de.png")

	// Signing out, which forgets the live preview's conversation kept in the browser.
	const previews = `Object.keys(localStorage).filter(k => k.startsWith('parley:preview:')).length`
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](previews)); err != nil || n == 0 {
		t.Fatalf("the preview's conversations kept before signing out: %d, %v", n, err)
	}
	err = chromedp.Do(ctx,
		run(`document.querySelector('form[action="/dashboard/logout"] button').click()`),
		bodyHas("Sie sind abgemeldet"),
		waitFor(previews+` === 0`),
	)
	if err != nil {
		t.Fatalf("signing out: %v", err)
	}

	// An owner of both merchants picks one, with the keyboard, and sees its leads.
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/?lang=en"),
		waitFor(`!!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "both@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/merchants'`),
		bodyHas("Shop beta"),
	)
	if err != nil {
		t.Fatalf("signing in as the owner of both: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-merchants.png")
	err = chromedp.Do(ctx,
		run(`document.querySelector('input[name=merchant][value=beta]').form.querySelector('button').focus()`),
		chromedp.KeyEvent(kb.Enter),
		waitFor(`location.pathname === '/dashboard/'`),
		bodyHas("Shop beta"),
		chromedp.Click(`nav.main a[href="/dashboard/leads"]`),
		bodyHas("jane@customer.example"),
	)
	if err != nil {
		t.Fatalf("choosing beta: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-leads-beta.png")
}

// saveScreenshot keeps the page, once it has loaded, as a test artifact.
func saveScreenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if err := chromedp.Do(ctx, waitFor(`document.readyState === 'complete' && document.body.offsetWidth > 0`)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	headless.Screenshot(ctx, t, name)
}
