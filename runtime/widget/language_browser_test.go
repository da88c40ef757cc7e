//go:build integration

package widget_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/headless"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The widget speaks the visitor's language: a browser set to French gets French buttons on an English shop, and
// the shop's language when the merchant fixed it.
func TestWidgetSpeaksTheVisitorsLanguage(t *testing.T) {
	for _, tc := range []struct {
		name, browser, locale string
		fixed                 bool
		send, placeholder     string
		lang                  string
		// fetched is how many languages' texts the widget fetches: the browser's before the settings come, then
		// the merchant's when fixed.
		fetched int
	}{
		{name: "French browser, English shop", browser: "fr-FR,fr", locale: "en", send: "Envoyer", placeholder: "Posez votre question", lang: "fr", fetched: 1},
		{name: "Polish browser, shop without a locale", browser: "pl", send: "Wyślij", placeholder: "Wpisz pytanie", lang: "pl", fetched: 1},
		// The first language the widget speaks wins: it has no Czech, but Italian.
		{name: "Czech then Italian browser", browser: "cs,it-CH", locale: "de", send: "Invia", placeholder: "Scrivi la tua domanda", lang: "it", fetched: 1},
		// Hebrew is laid out right to left.
		{name: "Hebrew browser, English shop", browser: "he-IL", locale: "en", send: "שליחה", placeholder: "כתבו את השאלה שלכם", lang: "he", fetched: 1},
		{name: "Japanese browser, German shop", browser: "ja", locale: "de", send: "Senden", placeholder: "Ihre Frage", lang: "de", fetched: 1},
		{name: "French browser, English shop fixed", browser: "fr-FR,fr", locale: "en", fixed: true, send: "Send", placeholder: "Type your question", lang: "en", fetched: 1},
		{name: "French browser, German shop fixed", browser: "fr", locale: "de-AT", fixed: true, send: "Senden", placeholder: "Ihre Frage", lang: "de", fetched: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			page := newShop(t)
			pk := rt.merchant(t, "shop", page.url, 100, func(b *tenant.Bundle) {
				b.Widget.Locale, b.Widget.FixedLocale = tc.locale, tc.fixed
			})
			page.embed(rt.url, pk, "shop")
			ctx := headless.Start(t, 1280, 800, time.Minute, headless.Languages(tc.browser))
			var send, placeholder, lang, dir string
			err := chromedp.Do(ctx,
				chromedp.Navigate(page.url),
				headless.WaitInWidget(`s && s.querySelector('.l') !== null`),
				click(".l"),
				// The settings have come, and every language's texts fetched have been read.
				headless.WaitInWidget(`s.querySelector('h2').textContent === 'Ask shop'`),
				headless.WaitInWidget(`performance.getEntriesByType('resource').filter(e => /\/widget\/\w+\.json$/.test(e.name)).length === `+strconv.Itoa(tc.fetched)),
				chromedp.Sleep(300*time.Millisecond),
				headless.EvalInWidget(`s.querySelector('.c button').textContent`, &send),
				headless.EvalInWidget(`s.querySelector('textarea').placeholder`, &placeholder),
				headless.EvalInWidget(`s.querySelector('.w').lang`, &lang),
				headless.EvalInWidget(`s.querySelector('.w').dir`, &dir),
			)
			if err != nil {
				t.Fatalf("opening the widget: %v", err)
			}
			wantDir := map[bool]string{true: "rtl", false: "ltr"}[tc.lang == "he"]
			if send != tc.send || placeholder != tc.placeholder || lang != tc.lang || dir != wantDir {
				t.Errorf("button %q, placeholder %q, lang %q, dir %q; want %q, %q, %q, %q", send, placeholder, lang, dir,
					tc.send, tc.placeholder, tc.lang, wantDir)
			}
			if tc.lang == "he" {
				headless.Screenshot(ctx, t, "widget-hebrew.png")
			}
			if tc.name != "French browser, English shop" {
				return
			}
			// The widget sends its language: the assistant's own reply is French too.
			var reply string
			err = chromedp.Do(ctx, focus("textarea"), key("hello"), key(kb.Enter),
				headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
				headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &reply))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(reply, "Bonjour") {
				t.Errorf("reply %q, want the French greeting", reply)
			}
			headless.Screenshot(ctx, t, "widget-french.png")
		})
	}
}
