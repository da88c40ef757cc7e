//go:build integration

package widget_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/headless"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/server"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
	"github.com/parley-dev/parley/runtime/tenant"
)

// runtimeEnv is a real runtime (SQLite store, retrieval assistant) on its own origin.
type runtimeEnv struct {
	url     string
	store   store.Store
	tenants *tenant.Registry
}

// newRuntime starts a runtime serving widget.js and the API.
func newRuntime(t *testing.T) *runtimeEnv {
	t.Helper()
	return newRuntimeAnswering(t, assistant.Retrieval{})
}

// newRuntimeAnswering is newRuntime with its answers written by responder.
func newRuntimeAnswering(t *testing.T, responder assistant.Responder) *runtimeEnv {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	tenants, err := tenant.NewRegistry(log, reg)
	if err != nil {
		t.Fatal(err)
	}
	tenants.MarkSynced()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// The listener comes first: the runtime writes its own address into widget.js.
	ts := httptest.NewUnstartedServer(nil)
	url := "http://" + ts.Listener.Addr().String()
	svc, err := chat.New(chat.Config{Store: st, Responder: responder})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Tenants: tenants, Chat: svc, Logger: log, Registry: reg, PublicURL: url})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	return &runtimeEnv{url: url, store: st, tenants: tenants}
}

// merchant publishes a merchant allowing origin, with knowledge, and returns its publishable key. Options change
// the merchant's bundle before it is published.
func (rt *runtimeEnv) merchant(t *testing.T, id, origin string, rate int32, options ...func(*tenant.Bundle)) string {
	t.Helper()
	key, err := credentials.NewAPIKey(credentials.PublishablePrefix)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := credentials.Describe(key)
	b := &tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: id, DisplayName: "Shop " + id,
		Plan:           tenant.Plan{Name: "test", RequestsPerSecond: rate, Burst: rate},
		AllowedOrigins: []string{origin},
		Widget:         tenant.Widget{Title: "Ask " + id, Greeting: "Welcome to " + id + "!", Color: "#0f766e"},
		APIKeys:        []tenant.APIKey{{ID: d.ID, Type: tenant.KeyPublishable, SHA256: d.SHA256}},
	}
	for _, o := range options {
		o(b)
	}
	bundletest.Publish(t, rt.tenants, "test/"+id, b)
	now := time.Now().UTC()
	for i, k := range [][3]string{
		{"Shipping", "Orders ship within 2 business days. Delivery to Canada takes 5 to 8 business days.", "https://shop.example/shipping"},
		{"Returns", "You can return unworn items within 60 days for a full refund.", "https://shop.example/returns"},
	} {
		err := storetest.WriteKnowledge(t.Context(), rt.store, store.Knowledge{ID: fmt.Sprintf("kn_%s_%d", id, i), MerchantID: id,
			Title: k[0], Content: k[1], URL: k[2], CreatedAt: now, UpdatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
	}
	return key
}

// conversations returns how many conversations the merchant has.
func (rt *runtimeEnv) conversations(t *testing.T, id string) int {
	t.Helper()
	list, _, err := rt.store.ListConversations(t.Context(), id, store.ConversationFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// shop is a merchant's web page on its own origin with exactly the embed merchants paste, under a strict
// Content-Security-Policy.
type shop struct {
	url string
	tag string
}

// newShop starts the page server; the embed is filled in with embed once the page's origin is allowed.
func newShop(t *testing.T) *shop {
	t.Helper()
	s := &shop{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src http://127.0.0.1:*; connect-src http://127.0.0.1:*; style-src 'self'; img-src 'self'")
		fmt.Fprintf(w, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Shop</title></head>\n<body><h1>A shop</h1>\n%s\n</body></html>", s.tag)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// embed sets the script tag of the page.
func (s *shop) embed(runtimeURL, key, merchantID string) {
	s.tag = fmt.Sprintf(`<script src="%s/widget.js" data-api-key="%s" data-merchant-id="%s" async></script>`, runtimeURL, key, merchantID)
}

// click clicks an element of the widget, as a pointer would.
func click(selector string) chromedp.Action[chromedp.Void] {
	var ok bool
	return headless.EvalInWidget(`(s.querySelector('`+selector+`').click(), true)`, &ok)
}

// focus puts the focus on an element of the widget.
func focus(selector string) chromedp.Action[chromedp.Void] {
	var ok bool
	return headless.EvalInWidget(`(s.querySelector('`+selector+`').focus(), true)`, &ok)
}

// key types keys into the focused element, as a keyboard would.
func key(k string) chromedp.Action[chromedp.Void] { return chromedp.KeyEvent(k) }

func TestWidgetInBrowser(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)

	// Keyboard only: Tab reaches the launcher, Enter opens the panel with the focus in the input, typing and
	// Enter send, Escape closes and gives the focus back to the launcher.
	var answer, sourceHref, sourceText string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('.l') && s.querySelector('header h2').textContent === 'Ask shop'`),
		key(kb.Tab),
		headless.WaitInWidget(`s.activeElement === s.querySelector('.l')`),
		key(kb.Enter),
		headless.WaitInWidget(`!s.querySelector('.p').hidden && s.activeElement === s.querySelector('textarea')`),
		headless.WaitInWidget(`s.querySelector('.m.bot').textContent.includes('Welcome to shop!')`),
		key("How long does delivery to Canada take?"),
		key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		headless.WaitInWidget(`s.querySelector('.t').offsetParent === null`), // the typing indicator is gone
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &answer),
		headless.EvalInWidget(`s.querySelector('.m.bot .src a').href`, &sourceHref),
		headless.EvalInWidget(`s.querySelector('.m.bot .src a').textContent`, &sourceText),
	)
	if err != nil {
		t.Fatalf("asking with the keyboard: %v", err)
	}
	if !strings.Contains(answer, "5 to 8 business days") || sourceHref != "https://shop.example/shipping" || sourceText != "Shipping" {
		t.Errorf("answer %q with source %q (%s)", answer, sourceText, sourceHref)
	}
	headless.Screenshot(ctx, t, "widget-open.png")
	if err := chromedp.Do(ctx, key(kb.Escape),
		headless.WaitInWidget(`s.querySelector('.p').hidden && s.activeElement === s.querySelector('.l') && s.querySelector('.l').getAttribute('aria-expanded') === 'false'`),
	); err != nil {
		t.Fatalf("closing with Escape: %v", err)
	}

	// A reload continues the conversation: the history is shown and the next question joins it.
	var shown int
	err = chromedp.Do(ctx,
		chromedp.Reload(),
		headless.WaitInWidget(`s && s.querySelectorAll('.m').length === 3`),
		headless.EvalInWidget(`s.querySelectorAll('.m').length`, &shown),
		click(".l"),
		headless.WaitInWidget(`s.activeElement === s.querySelector('textarea')`),
		key("Can I return shoes?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
	)
	if err != nil {
		t.Fatalf("after a reload: %v", err)
	}
	if n := rt.conversations(t, "shop"); n != 1 {
		t.Errorf("%d conversations after a reload, want the one continued", n)
	}
	// The visitor ID the widget keeps is 128 random bits, and the conversation is the visitor's.
	var visitor, id string
	if err := chromedp.Do(ctx, headless.EvalInWidget(`localStorage.getItem('parley:visitor')`, &visitor), conversationID(&id)); err != nil {
		t.Fatalf("reading the widget's storage: %v", err)
	}
	if !regexp.MustCompile(`^v_[0-9a-f]{32}$`).MatchString(visitor) {
		t.Errorf("visitor ID %q, want v_ and 32 hexadecimal digits", visitor)
	}
	if c, _, err := rt.store.GetConversation(t.Context(), "shop", id); err != nil || c.VisitorID != visitor {
		t.Errorf("conversation %q has visitor %q (%v), want %q", id, c.VisitorID, err, visitor)
	}

	// "New conversation" starts afresh.
	if err := chromedp.Do(ctx,
		click(".fresh"),
		headless.WaitInWidget(`s.querySelectorAll('.m').length === 1`),
		key("Hello"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
	); err != nil {
		t.Fatalf("new conversation: %v", err)
	}
	if n := rt.conversations(t, "shop"); n != 2 {
		t.Errorf("%d conversations after starting a new one, want 2", n)
	}
}

// The same embed on a site the merchant did not allow says so, and nothing reaches the merchant's data.
func TestWidgetOnAnOriginNotAllowed(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", "https://shop.example", 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var text string
	var disabled bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && !s.querySelector('.err').hidden`),
		click(".l"),
		headless.EvalInWidget(`s.querySelector('.err span').textContent`, &text),
		headless.EvalInWidget(`s.querySelector('textarea').disabled`, &disabled),
	)
	if err != nil {
		t.Fatal(err)
	}
	if text != "This chat is not enabled on this website." || !disabled {
		t.Errorf("refusal %q, input disabled %v", text, disabled)
	}
	if n := rt.conversations(t, "shop"); n != 0 {
		t.Errorf("%d conversations stored from a refused origin", n)
	}
}

// A visitor who outruns the plan's rate is told so, and can retry.
func TestWidgetRateLimited(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 1), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var text string
	var retryShown bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("Hello"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		key("Hello again"), key(kb.Enter), // within the second: over the plan's 1 request/s
		headless.WaitInWidget(`!s.querySelector('.err').hidden`),
		headless.EvalInWidget(`s.querySelector('.err span').textContent`, &text),
		headless.EvalInWidget(`!s.querySelector('.retry').hidden`, &retryShown),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "too quickly") || !retryShown {
		t.Errorf("rate limit shown as %q, retry offered %v", text, retryShown)
	}
}

// A visitor starting more conversations than the plan allows in an hour is told so, and can go on with the
// conversation it has.
func TestWidgetConversationRateLimited(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100, func(b *tenant.Bundle) { b.Plan.ConversationsPerVisitorPerHour = 1 }), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var text string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("Hello"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		click(".fresh"),
		headless.WaitInWidget(`s.querySelectorAll('.m').length === 1`),
		key("Hello again"), key(kb.Enter),
		headless.WaitInWidget(`!s.querySelector('.err').hidden`),
		headless.EvalInWidget(`s.querySelector('.err span').textContent`, &text),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Too many new conversations") {
		t.Errorf("the conversation limit shown as %q", text)
	}
	if n := rt.conversations(t, "shop"); n != 1 {
		t.Errorf("%d conversations, want the first only", n)
	}
}

// unanswerable is a question the test merchant's knowledge base has no answer for.
const unanswerable = "Do you sell electric bicycles?"

// leads returns the merchant's leads.
func (rt *runtimeEnv) leads(t *testing.T, id string) []store.Lead {
	t.Helper()
	list, _, err := rt.store.ListLeads(t.Context(), id, store.LeadFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// countLeadRequests makes the page count the widget's calls to /api/v1/leads in window.leadRequests.
func countLeadRequests() chromedp.Action[chromedp.Void] {
	var ok bool
	return headless.EvalInWidget(`(window.leadRequests = 0, window.fetch = (f => function (u) { if (String(u).includes('/api/v1/leads')) window.leadRequests++; return f.apply(this, arguments); })(window.fetch), true)`, &ok)
}

// conversationID is the widget's current conversation, from its localStorage.
func conversationID(out *string) chromedp.Action[chromedp.Void] {
	return headless.EvalInWidget(`JSON.parse(localStorage.getItem('parley:shop')).conversation_id`, out)
}

// An answer the assistant could not give offers the contact form; it checks what the visitor left before
// sending anything, and a lead sent through it belongs to the conversation.
func TestWidgetContactForm(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)

	// An answered question offers nothing; an unanswered one offers the form right under its answer.
	var offered bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		countLeadRequests(),
		click(".l"),
		key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		headless.EvalInWidget(`!!s.querySelector('.lead')`, &offered),
	)
	if err != nil {
		t.Fatal(err)
	}
	if offered {
		t.Error("the contact form is offered under an answer")
	}
	var message, intro string
	err = chromedp.Do(ctx,
		key(unanswerable), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot')[2].nextElementSibling === s.querySelector('.lead') && s.querySelector('.offer').offsetParent !== null`),
		headless.WaitInWidget(`s.querySelector('.offer').textContent === 'Leave your contact details' && s.querySelector('.lf').hidden`),
		click(".offer"),
		headless.WaitInWidget(`!s.querySelector('.lf').hidden && s.querySelector('.offer').hidden && s.activeElement === s.querySelector('#parley-name')`),
		headless.EvalInWidget(`s.querySelector('#parley-message').value`, &message),
		headless.EvalInWidget(`s.querySelector('.lf p').textContent`, &intro),
	)
	if err != nil {
		t.Fatalf("offering the form: %v", err)
	}
	if message != unanswerable || !strings.Contains(intro, "email address or a phone number") {
		t.Errorf("form prefilled with %q, introduced as %q", message, intro)
	}
	// Every field has a label.
	var unlabelled string
	if err := chromedp.Do(ctx, headless.EvalInWidget(`[...s.querySelectorAll('.lf input, .lf textarea')].filter(f => !f.labels.length || !f.labels[0].textContent.trim()).map(f => f.name).join(',')`, &unlabelled)); err != nil {
		t.Fatal(err)
	}
	if unlabelled != "" {
		t.Errorf("fields without a label: %s", unlabelled)
	}

	// Sent empty: both errors, announced and tied to their fields, the focus on the first; nothing is sent.
	var contactErr, consentErr, described string
	var requests int
	err = chromedp.Do(ctx,
		click(".lf button"),
		headless.WaitInWidget(`s.querySelector('#parley-ce').textContent !== '' && s.activeElement === s.querySelector('#parley-email')`),
		headless.EvalInWidget(`s.querySelector('#parley-ce').textContent`, &contactErr),
		headless.EvalInWidget(`s.querySelector('#parley-ke').textContent`, &consentErr),
		headless.EvalInWidget(`['email', 'phone', 'consent'].map(f => s.querySelector('#parley-' + f).getAttribute('aria-invalid') + ':' + s.getElementById(s.querySelector('#parley-' + f).getAttribute('aria-describedby')).getAttribute('role')).join(' ')`, &described),
	)
	if err != nil {
		t.Fatalf("sending the form empty: %v", err)
	}
	if contactErr != "Please give an email address or a phone number." || consentErr != "Please agree to be contacted so we can reply." ||
		described != "true:alert true:alert true:alert" {
		t.Errorf("errors %q and %q; fields (aria-invalid:role of the description) %s", contactErr, consentErr, described)
	}

	// An email address but no consent: the consent error alone, the focus on the checkbox; still nothing is sent.
	err = chromedp.Do(ctx,
		key("ada@example.com"),
		click(".lf button"),
		headless.WaitInWidget(`s.querySelector('#parley-ce').textContent === '' && s.activeElement === s.querySelector('#parley-consent')`),
		headless.EvalInWidget(`s.querySelector('#parley-ke').textContent`, &consentErr),
		headless.EvalInWidget(`window.leadRequests`, &requests),
	)
	if err != nil {
		t.Fatalf("sending the form without consent: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-contact-form-errors.png")
	if consentErr != "Please agree to be contacted so we can reply." || requests != 0 {
		t.Errorf("without consent: error %q, %d requests sent", consentErr, requests)
	}
	if n := len(rt.leads(t, "shop")); n != 0 {
		t.Errorf("%d leads stored before the form was valid", n)
	}

	// With consent: the thanks replace the form and take the focus; the lead is the conversation's.
	var conv string
	err = chromedp.Do(ctx,
		click("#parley-consent"),
		click(".lf button"),
		headless.WaitInWidget(`!s.querySelector('.thx').hidden && s.querySelector('.lf').hidden && s.activeElement === s.querySelector('.thx')`),
		headless.WaitInWidget(`s.querySelector('.thx').textContent === 'Thank you! We will get back to you soon.'`),
		headless.EvalInWidget(`window.leadRequests`, &requests),
		conversationID(&conv),
	)
	if err != nil {
		t.Fatalf("sending the form: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-contact-form.png")
	leads := rt.leads(t, "shop")
	if requests != 1 || len(leads) != 1 {
		t.Fatalf("%d requests, %d leads stored, want 1 of each", requests, len(leads))
	}
	l := leads[0]
	if conv == "" || l.ConversationID != conv || l.Email != "ada@example.com" || !l.Consent || l.Source != store.LeadFromForm ||
		l.Message != unanswerable || l.VisitorID == "" {
		t.Errorf("lead %+v, conversation %q", l, conv)
	}

	// Not offered again in that conversation, also after a reload; a new conversation offers it again.
	err = chromedp.Do(ctx,
		focus(".c textarea"),
		key("Do you repair skateboards?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 4`),
		headless.WaitInWidget(`s.querySelector('.offer').hidden && s.querySelectorAll('.m.bot')[2].nextElementSibling === s.querySelector('.lead')`),
		chromedp.Reload(),
		headless.WaitInWidget(`s && s.querySelectorAll('.m.bot').length === 4 && s.querySelector('header h2').textContent === 'Ask shop'`),
		headless.WaitInWidget(`s.querySelector('.offer').hidden && !s.querySelector('.thx').hidden && s.querySelectorAll('.m.bot')[2].nextElementSibling === s.querySelector('.lead')`),
		click(".l"),
		click(".fresh"),
		headless.WaitInWidget(`s.querySelectorAll('.m').length === 1 && !s.querySelector('.lead')`),
		key(unanswerable), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && s.querySelector('.offer').offsetParent !== null`),
		click(".offer"),
		headless.WaitInWidget(`s.querySelector('#parley-email').value === '' && !s.querySelector('#parley-consent').checked && s.querySelector('#parley-ke').textContent === ''`),
	)
	if err != nil {
		t.Fatalf("after the lead: %v", err)
	}
}

// The contact form works with the keyboard alone: Shift+Tab from the input reaches the offer, Enter opens the
// form, Tab moves through it, Space ticks the consent, Enter sends; Escape still closes the panel.
func TestWidgetContactFormKeyboard(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	shiftTab := chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(kb.ModifierShift))
	focused := func(selector string) chromedp.Action[chromedp.Void] {
		return headless.WaitInWidget(`s.activeElement === s.querySelector('` + selector + `')`)
	}
	var conv string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		key(kb.Tab), focused(".l"), key(kb.Enter), focused(".c textarea"),
		key(unanswerable), key(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.offer') && s.querySelector('.offer').offsetParent !== null`),
		shiftTab, focused(".offer"),
		key(kb.Enter), focused("#parley-name"),
		key("Ada Lovelace"), key(kb.Tab), focused("#parley-email"),
		key("ada@example.com"), key(kb.Tab), focused("#parley-phone"),
		key(kb.Tab), focused("#parley-message"),
		key(kb.Tab), focused("#parley-consent"),
		key(" "), headless.WaitInWidget(`s.querySelector('#parley-consent').checked`),
		key(kb.Tab), focused(".lf button"),
		key(kb.Enter),
		headless.WaitInWidget(`!s.querySelector('.thx').hidden`), focused(".thx"),
		conversationID(&conv),
		key(kb.Escape),
		headless.WaitInWidget(`s.querySelector('.p').hidden`), focused(".l"),
	)
	if err != nil {
		t.Fatal(err)
	}
	leads := rt.leads(t, "shop")
	if len(leads) != 1 || leads[0].Name != "Ada Lovelace" || leads[0].Email != "ada@example.com" || leads[0].ConversationID != conv {
		t.Errorf("leads %+v, conversation %q", leads, conv)
	}
}

// In German, and with an address the runtime refuses: the server's refusal is shown in the form, which stays
// filled in for a correction.
func TestWidgetContactFormGermanServerError(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	// A German shop that fixed its language, visited by an English browser.
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100, func(b *tenant.Bundle) { b.Widget.Locale, b.Widget.FixedLocale = "de", true }), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute, headless.Languages("en-US,en"))
	var offer, labels, contactErr, consentErr, serverErr, thanks string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('.w').lang === 'de' && s.querySelector('.c button').textContent === 'Senden'`),
		click(".l"),
		key("Verkaufen Sie Elektrofahrräder?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.offer') && s.querySelector('.offer').offsetParent !== null`),
		headless.EvalInWidget(`s.querySelector('.offer').textContent`, &offer),
		click(".offer"),
		headless.EvalInWidget(`[...s.querySelectorAll('.lf label')].map(l => l.textContent).join('|')`, &labels),
		click(".lf button"),
		headless.WaitInWidget(`s.querySelector('#parley-ce').textContent !== ''`),
		headless.EvalInWidget(`s.querySelector('#parley-ce').textContent`, &contactErr),
		headless.EvalInWidget(`s.querySelector('#parley-ke').textContent`, &consentErr),
		key("ada..lovelace@example.com"), // the widget lets it pass; the runtime's check does not
		click("#parley-consent"),
		click(".lf button"),
		headless.WaitInWidget(`s.querySelector('.lf .fe:not([id])').textContent !== ''`),
		headless.EvalInWidget(`s.querySelector('.lf .fe:not([id])').textContent`, &serverErr),
		headless.WaitInWidget(`!s.querySelector('.lf').hidden && s.querySelector('#parley-email').value === 'ada..lovelace@example.com' && !s.querySelector('.lf button').disabled`),
		headless.EvalInWidget(`(s.querySelector('#parley-email').value = 'ada@example.com', true)`, new(bool)),
		click(".lf button"),
		headless.WaitInWidget(`!s.querySelector('.thx').hidden && s.querySelector('.lf .fe:not([id])').textContent === ''`),
		headless.EvalInWidget(`s.querySelector('.thx').textContent`, &thanks),
	)
	if err != nil {
		t.Fatal(err)
	}
	if offer != "Kontaktdaten hinterlassen" || labels != "Name|E-Mail|Telefon|Nachricht|Ich bin einverstanden, zu meiner Frage kontaktiert zu werden" {
		t.Errorf("offer %q, labels %q", offer, labels)
	}
	if contactErr != "Bitte geben Sie eine E-Mail-Adresse oder eine Telefonnummer an." ||
		consentErr != "Bitte stimmen Sie der Kontaktaufnahme zu, damit wir antworten können." {
		t.Errorf("errors %q and %q", contactErr, consentErr)
	}
	if serverErr != "Bitte prüfen Sie Ihre Angaben." || thanks != "Vielen Dank! Wir melden uns bald bei Ihnen." {
		t.Errorf("refusal shown as %q, thanks %q", serverErr, thanks)
	}
	if leads := rt.leads(t, "shop"); len(leads) != 1 || leads[0].Email != "ada@example.com" {
		t.Errorf("leads %+v", leads)
	}
}

// A contact form sent faster than the plan's rate says so with the chat's message, and keeps what was filled in.
func TestWidgetContactFormRateLimited(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 1), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var text string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key(unanswerable), key(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.offer') && s.querySelector('.offer').offsetParent !== null`),
		// Within the second of the question: over the plan's 1 request/s.
		headless.EvalInWidget(`(s.querySelector('.offer').click(), s.querySelector('#parley-email').value = 'ada@example.com',
			s.querySelector('#parley-consent').click(), s.querySelector('.lf button').click(), true)`, new(bool)),
		headless.WaitInWidget(`s.querySelector('.lf .fe:not([id])').textContent !== ''`),
		headless.EvalInWidget(`s.querySelector('.lf .fe:not([id])').textContent`, &text),
		headless.WaitInWidget(`!s.querySelector('.lf').hidden && s.querySelector('#parley-email').value === 'ada@example.com' && s.querySelector('.thx').hidden`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if text != "You are sending messages too quickly. Please wait a moment and retry." {
		t.Errorf("rate limit shown as %q", text)
	}
	if n := len(rt.leads(t, "shop")); n != 0 {
		t.Errorf("%d leads stored from a refused request", n)
	}
}

// A question the widget cannot answer but that is near an item links that item under the reply, introduced as a
// suggestion, besides offering the contact form; one near nothing links nothing.
func TestWidgetSuggestsPages(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)

	var intro, href string
	var offered bool
	var links int
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("Can I return shoes I already wore outside?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.sg').textContent`, &intro),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.src a').href`, &href),
		headless.EvalInWidget(`!!s.querySelector('.lead')`, &offered),
	)
	if err != nil {
		t.Fatalf("asking a question near an item: %v", err)
	}
	if intro != "These pages may help:" || href != "https://shop.example/returns" || !offered {
		t.Errorf("suggestion %q to %q, contact form offered %v", intro, href, offered)
	}
	headless.Screenshot(ctx, t, "widget-suggestions.png")
	err = chromedp.Do(ctx,
		key(unanswerable), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[2].querySelectorAll('.src a, .sg').length`, &links),
	)
	if err != nil {
		t.Fatalf("asking a question near nothing: %v", err)
	}
	if links != 0 {
		t.Errorf("%d links or introductions under a reply near nothing, want none", links)
	}
}

// A conversation that holds its most messages goes on in a new one: the visitor's question is answered there, and
// the log keeps what came before.
func TestWidgetGoesOnPastAFullConversation(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	// The plan's answers per conversation and visitor above the conversation's messages, so that the conversation
	// fills before the plan's bounds.
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100, func(b *tenant.Bundle) {
		b.Plan.TurnsPerConversation, b.Plan.TurnsPerVisitorPerDay = 500, 1000
	}), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var first, second string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("Hello"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		conversationID(&first),
	)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	for i := range chat.MaxConversationMessages/2 - 1 {
		ex := store.Exchange{MerchantID: "shop", ConversationID: first, ConversationExists: true,
			Question: store.Message{ID: fmt.Sprint("q", i), Role: store.RoleVisitor, Text: "hello", CreatedAt: at, Answered: true},
			Answer:   store.Message{ID: fmt.Sprint("a", i), Role: store.RoleAssistant, Text: "hi", CreatedAt: at}}
		if _, err := chat.RecordExchange(t.Context(), rt.store, ex); err != nil {
			t.Fatal(err)
		}
	}
	var answer string
	var errorShown bool
	err = chromedp.Do(ctx,
		key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[2].textContent`, &answer),
		headless.EvalInWidget(`!s.querySelector('.err').hidden`, &errorShown),
		conversationID(&second),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "5 to 8 business days") || errorShown {
		t.Errorf("after the full conversation: answer %q, error shown %v", answer, errorShown)
	}
	if second == "" || second == first {
		t.Errorf("the widget's conversation is %q, want a new one after %q", second, first)
	}
	if n := rt.conversations(t, "shop"); n != 2 {
		t.Errorf("%d conversations, want the full one and the new one", n)
	}
}

// A conversation that has had the answers the merchant's plan allows one (429 conversation_limit_reached) is left
// as a full one is: the question goes on in a new conversation, with no error shown.
func TestWidgetGoesOnPastThePlansAnswersPerConversation(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100, func(b *tenant.Bundle) { b.Plan.TurnsPerConversation = 1 }), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var first, second, answer string
	var errorShown bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("Hello"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		conversationID(&first),
		key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[2].textContent`, &answer),
		headless.EvalInWidget(`!s.querySelector('.err').hidden`, &errorShown),
		conversationID(&second),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "5 to 8 business days") || errorShown {
		t.Errorf("past the plan's answers of a conversation: answer %q, error shown %v", answer, errorShown)
	}
	if second == "" || second == first {
		t.Errorf("the widget's conversation is %q, want a new one after %q", second, first)
	}
}

// A conversation the runtime says is not this visitor's (here another visitor's, left in the page's storage) is
// forgotten: the question goes on in a new conversation of the visitor's own, and the other is left as it was.
func TestWidgetGoesOnPastAnotherVisitorsConversation(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	at := time.Now().UTC()
	if _, err := chat.RecordExchange(t.Context(), rt.store, store.Exchange{MerchantID: "shop", ConversationID: "c-other", VisitorID: "v_other",
		Question: store.Message{ID: "q1", Role: store.RoleVisitor, Text: "I am ana@example.com", CreatedAt: at, Answered: true},
		Answer:   store.Message{ID: "a1", Role: store.RoleAssistant, Text: "Thanks", CreatedAt: at}}); err != nil {
		t.Fatal(err)
	}
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var ok bool
	var answer, id string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.EvalInWidget(`(localStorage.setItem('parley:shop', JSON.stringify({messages: [], conversation_id: 'c-other'})), true)`, &ok),
		chromedp.Reload(),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &answer),
		conversationID(&id),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "5 to 8 business days") || id == "" || id == "c-other" {
		t.Errorf("answer %q in conversation %q, want the delivery time in a new conversation", answer, id)
	}
	if _, msgs, err := rt.store.GetConversation(t.Context(), "shop", "c-other"); err != nil || len(msgs) != 2 {
		t.Errorf("the other visitor's conversation: %d messages, %v; want its 2", len(msgs), err)
	}
}

// Without storage (a private window that refuses localStorage), the visitor still goes on in the conversation
// the page started: the widget keeps a visitor ID for as long as the page lives, as the runtime continues a
// browser's conversation only for the visitor ID that started it.
func TestWidgetWithoutStorage(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)
	noStorage := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: `Object.defineProperty(window, 'localStorage', {get() { throw new DOMException('The user denied storage', 'SecurityError'); }})`,
		})
		return err
	})
	err := chromedp.Do(ctx, noStorage,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		key("Can I return shoes?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
	)
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := rt.store.ListConversations(t.Context(), "shop", store.ConversationFilter{Limit: 10})
	if err != nil || len(list) != 1 || list[0].MessageCount != 4 || !regexp.MustCompile(`^v_[0-9a-f]{32}$`).MatchString(list[0].VisitorID) {
		t.Errorf("conversations %+v (%v), want one of 4 messages with the page's visitor ID", list, err)
	}
}
