//go:build integration

package widget_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/internal/testutil/headless"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
)

// shopAnsweredBy serves a shop page embedding the widget of a runtime whose answers come from the model behind
// provider, and starts a browser.
func shopAnsweredBy(t *testing.T, provider *fakellm.Provider) (context.Context, *shop) {
	t.Helper()
	responder, err := llm.New(llm.Config{BaseURL: provider.URL(), Model: "m", Timeout: 10 * time.Second, MaxTokens: 100,
		ContextItems: 3, HistoryTokens: 500, Offline: assistant.Retrieval{}, Logger: slog.New(slog.DiscardHandler),
		Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntimeAnswering(t, responder)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	return headless.Start(t, 1280, 800, time.Minute), page
}

// askOn is the steps of a visitor who opens the shop page's widget and sends question.
func askOn(page *shop, question string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('.l') !== null`),
		click(".l"),
		headless.WaitInWidget(`s.activeElement === s.querySelector('textarea')`),
		key(question), key(kb.Enter),
	}
}

// The widget shows a model's answer as it is written, then its sources once it is whole.
func TestWidgetStreamsTheAnswer(t *testing.T) {
	provider := fakellm.New(t, "Delivery to Canada ", "takes 5 to 8 ", "business days [1].")
	provider.Set(func(p *fakellm.Provider) { p.PieceDelay = 400 * time.Millisecond })
	ctx, page := shopAnsweredBy(t, provider)

	var partial, whole, sourceHref string
	var sourcesWhilePartial int
	err := chromedp.Do(ctx, append(askOn(page, "How long does delivery to Canada take?"),
		// The first piece is shown before the rest is written, without sources yet.
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && s.querySelectorAll('.m.bot')[1].textContent.includes('Delivery to Canada')`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &partial),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelectorAll('.src a').length`, &sourcesWhilePartial),
	)...)
	if err != nil {
		t.Fatalf("asking: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-streaming.png")
	err = chromedp.Do(ctx,
		headless.WaitInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.src a') !== null`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &whole),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.src a').href`, &sourceHref),
	)
	if err != nil {
		t.Fatalf("waiting for the whole answer: %v", err)
	}
	if strings.Contains(partial, "business days") || sourcesWhilePartial != 0 {
		t.Errorf("the answer did not grow: first seen %q with %d sources", partial, sourcesWhilePartial)
	}
	if !strings.Contains(whole, "Delivery to Canada takes 5 to 8 business days 1.") || sourceHref != "https://shop.example/shipping" {
		t.Errorf("answer %q, source %q", whole, sourceHref)
	}
	headless.Screenshot(ctx, t, "widget-streamed.png")
}

// When the model finds no answer in the items it was given, the widget shows the merchant's fallback, which nothing
// of the refusal reached while it streamed, the items nearest to the question, and the contact offer.
func TestWidgetLinksPagesWhenTheModelRefuses(t *testing.T) {
	ctx, page := shopAnsweredBy(t, fakellm.New(t, "NO_", "ANSWER"))

	var text, intro, href string
	var offered bool
	err := chromedp.Do(ctx, append(askOn(page, "How long does delivery to Canada take?"),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && s.querySelector('.lead') !== null`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &text),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.sg').textContent`, &intro),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.src a').href`, &href),
		headless.EvalInWidget(`!!s.querySelector('.lead')`, &offered),
	)...)
	if err != nil {
		t.Fatalf("asking: %v", err)
	}
	if strings.Contains(text, "NO_") || intro != "These pages may help:" || href != "https://shop.example/shipping" || !offered {
		t.Errorf("reply %q, suggestion %q to %q, contact form offered %v", text, intro, href, offered)
	}
	headless.Screenshot(ctx, t, "widget-refused.png")
}
