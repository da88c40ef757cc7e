//go:build integration

package widget_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/headless"
	"github.com/parley-dev/parley/runtime/store"
)

// TestWidgetRatesAnswers: each answer has a thumbs up and down, pressed states told to screen readers; thumbs down
// by keyboard offers a reason, sent with the rating, which the merchant reads in the conversation; the rating
// survives a reload; starting a new conversation asks the ended one's 1 to 5 rating under the new greeting.
func TestWidgetRatesAnswers(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	ctx := headless.Start(t, 1280, 800, time.Minute)

	var labels, pressed string
	err := chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && !!s.querySelector('.m.bot .rt')`),
		headless.EvalInWidget(`[...s.querySelectorAll('.rt > button')].map(b => b.getAttribute('aria-label')).join(',')`, &labels),
		headless.EvalInWidget(`[...s.querySelectorAll('.rt > button')].map(b => b.getAttribute('aria-pressed')).join(',')`, &pressed),
	)
	if err != nil {
		t.Fatal(err)
	}
	if labels != "Helpful,Not helpful" || pressed != "false,false" {
		t.Errorf("the rating buttons are labelled %q, pressed %q", labels, pressed)
	}
	if n := len(rt.ratings(t, "shop")); n != 0 {
		t.Errorf("the greeting or an unrated answer holds %d ratings", n)
	}

	// By keyboard: the focus on thumbs down, Enter, the reason field takes the focus; typed and sent with Enter.
	err = chromedp.Do(ctx,
		focus(".rt .dn"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.rt .dn').getAttribute('aria-pressed') === 'true' && s.activeElement === s.querySelector('.rt input')`),
		key("It takes two weeks to Toronto"),
	)
	if err != nil {
		t.Fatalf("thumbs down: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-reason.png")
	err = chromedp.Do(ctx,
		key(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.rt p').textContent === 'Thank you for your feedback.' && s.querySelector('.rt form').hidden && s.activeElement === s.querySelector('.rt .dn')`),
	)
	if err != nil {
		t.Fatalf("thumbs down with a reason: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-rated.png")
	ratings := rt.ratings(t, "shop")
	if len(ratings) != 1 || ratings[0].Rating != "down" || ratings[0].Comment != "It takes two weeks to Toronto" {
		t.Fatalf("ratings stored: %+v", ratings)
	}

	// The rating is kept across a reload; thumbs up replaces it.
	err = chromedp.Do(ctx,
		chromedp.Reload(),
		headless.WaitInWidget(`s && s.querySelectorAll('.m.bot').length === 2 && s.querySelector('.rt .dn').getAttribute('aria-pressed') === 'true'`),
		click(".l"), click(".rt .up"),
		headless.WaitInWidget(`s.querySelector('.rt .up').getAttribute('aria-pressed') === 'true' && s.querySelector('.rt .dn').getAttribute('aria-pressed') === 'false'`),
	)
	if err != nil {
		t.Fatalf("after a reload: %v", err)
	}
	if ratings := rt.ratings(t, "shop"); len(ratings) != 1 || ratings[0].Rating != "up" {
		t.Errorf("after thumbs up, ratings stored: %+v", ratings)
	}

	// A new conversation asks the rating of the one that ended; the focus stays in the message field.
	err = chromedp.Do(ctx,
		click(".fresh"),
		headless.WaitInWidget(`!!s.querySelector('.cs') && s.querySelectorAll('.m').length === 1 && s.activeElement === s.querySelector('.c textarea')`),
	)
	if err != nil {
		t.Fatalf("asking the conversation's rating: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-satisfaction.png")
	err = chromedp.Do(ctx,
		click(".cs div button:nth-child(4)"),
		headless.WaitInWidget(`s.querySelector('.cs .thx') && s.querySelector('.cs').textContent === 'Thank you for your feedback.'`),
	)
	if err != nil {
		t.Fatalf("rating the conversation: %v", err)
	}
	list, _, err := rt.store.ListConversations(t.Context(), "shop", storeFilter())
	if err != nil || len(list) != 1 {
		t.Fatalf("conversations: %v, %v", list, err)
	}
	if _, sat, err := rt.store.ConversationRatings(t.Context(), "shop", list[0].ID); err != nil || sat == nil || sat.Score != 4 {
		t.Errorf("the conversation's rating: %+v, %v; want 4", sat, err)
	}
}

// ratings returns the ratings of the merchant's answers in its conversations.
func (rt *runtimeEnv) ratings(t *testing.T, id string) []store.Rating {
	t.Helper()
	list, _, err := rt.store.ListConversations(t.Context(), id, storeFilter())
	if err != nil {
		t.Fatal(err)
	}
	var all []store.Rating
	for _, c := range list {
		r, _, err := rt.store.ConversationRatings(t.Context(), id, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r...)
	}
	return all
}

func storeFilter() store.ConversationFilter { return store.ConversationFilter{Limit: 100} }
