//go:build integration

package dashboard_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/internal/testutil/headless"
)

// The loop a merchant closes in a week, in a real browser: a visitor rates an answer down in the widget, the
// question shows in the dashboard's review queue, the merchant lists it under the right item there, and the
// widget's next ask of it is answered from that item.
func TestReviewQueueInBrowser(t *testing.T) {
	e := newEnv(t)
	ctx := headless.Start(t, 1280, 900, 90*time.Second)
	const question = "Is there a money-back guarantee?"

	err := chromedp.Do(ctx,
		chromedp.Navigate(e.shop),
		headless.WaitInWidget(`s && s.querySelector('header h2').textContent === 'Ask alpha'`),
		headless.EvalInWidget(`(s.querySelector('.l').click(), true)`, new(bool)),
		chromedp.KeyEvent(question), chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && !!s.querySelector('.rt .dn')`),
		// Missed: the knowledge base says nothing of a guarantee in those words.
		headless.WaitInWidget(`!s.querySelectorAll('.m.bot')[1].textContent.includes('60 days')`),
		headless.EvalInWidget(`(s.querySelector('.rt .dn').click(), true)`, new(bool)),
		headless.WaitInWidget(`s.activeElement === s.querySelector('.rt input')`),
		chromedp.KeyEvent("I want to know about refunds"), chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.rt p').textContent === 'Thank you for your feedback.'`),
	)
	if err != nil {
		t.Fatalf("rating the answer down in the widget: %v", err)
	}

	// The merchant signs in and finds the question in the review queue, with the visitor's reason.
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/review"),
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/review'`),
		bodyHas(question),
		bodyHas("I want to know about refunds"),
		waitFor(`[...document.querySelectorAll('.review select option')].some(o => o.textContent === 'Returns alpha')`),
	)
	if err != nil {
		t.Fatalf("the review queue: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-review.png")

	// The conversation shows the visitor's rating with its reason.
	err = chromedp.Do(ctx,
		chromedp.Click(`.review a[href^="/dashboard/conversations/"]`),
		bodyHas("The visitor rated this answer not helpful. Reason: I want to know about refunds"),
		chromedp.Navigate(e.url+"/dashboard/review"),
		bodyHas(question),
	)
	if err != nil {
		t.Fatalf("the rated conversation: %v", err)
	}

	// Listed under the returns item: the group leaves the queue.
	err = chromedp.Do(ctx,
		run(`(() => { const s = document.querySelector('.review select'); s.value = [...s.options].find(o => o.textContent === 'Returns alpha').value; })()`),
		chromedp.Click(`.review form button`),
		waitFor(`location.pathname === '/dashboard/review' && location.search === '?ok=review-fixed'`),
		bodyHas("Nothing to review"),
	)
	if err != nil {
		t.Fatalf("listing the question under the item: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-review-fixed.png")
	item, err := e.store.GetKnowledge(t.Context(), "alpha", "kn_alpha_1")
	if err != nil || len(item.Questions) != 1 || item.Questions[0] != question {
		t.Fatalf("the returns item lists %v, %v; want the question", item.Questions, err)
	}

	// The widget's next ask of it is answered from the returns item.
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.shop),
		headless.WaitInWidget(`s && s.querySelectorAll('.m.bot').length === 2`),
		headless.EvalInWidget(`(s.querySelector('.l').click(), true)`, new(bool)),
		chromedp.KeyEvent(question), chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot')[2].textContent.includes('60 days')`),
	)
	if err != nil {
		t.Fatalf("asking again in the widget: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-answered-after-fix.png")

	// The overview says what the fix did.
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/"),
		waitFor(`!!document.querySelector('#progress-h')`),
		bodyHas("is there a moneyback guarantee: fixed"),
		bodyHas("asked since: 1, answered: 1"),
	)
	saveScreenshot(ctx, t, "dashboard-did-it-work.png")
	if err != nil {
		t.Fatalf("the overview after the fix: %v", err)
	}
}

// A drafted answer in a real browser: the owner asks the model for a draft from the review queue, edits it in the
// add form and saves it as an item listing the question, which takes the question out of the queue at once.
func TestDraftAnswerInBrowser(t *testing.T) {
	provider := fakellm.New(t)
	e := newModelEnv(t, provider)
	e.chat(t, "alpha", draftQuestion)
	provider.Set(func(p *fakellm.Provider) { p.Answer = []string{draftText} })
	ctx := headless.Start(t, 1280, 900, 90*time.Second)

	err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/review"),
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/review'`),
		bodyHas(draftQuestion),
	)
	if err != nil {
		t.Fatalf("the review queue: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-review-draft-button.png")
	err = chromedp.Do(ctx,
		chromedp.Click(`.review form.draft button`),
		waitFor(`!!document.querySelector('#drafted #k-title') && document.querySelector('#k-title').value === 'Changing the delivery address'`),
		bodyHas("Your model's draft"),
		waitFor(`document.querySelector('#drafted #k-dealt').checked`),
		bodyHas("Take the question out of the review list"),
	)
	if err != nil {
		t.Fatalf("drafting: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-review-drafted.png")
	err = chromedp.Do(ctx,
		run(`(() => { const c = document.querySelector('#k-content'); c.value = c.value.replace('[hours]', '12 hours'); })()`),
		chromedp.Click(`#drafted form button[type=submit]`),
		waitFor(`location.pathname === '/dashboard/review' && location.search === '?ok=answer-saved'`),
		bodyHas("The item was saved and the question left the review list."),
		bodyHas("Nothing to review"),
	)
	if err != nil {
		t.Fatalf("saving the draft: %v", err)
	}
	saveScreenshot(ctx, t, "dashboard-review-answer-saved.png")
	items, err := e.store.AllKnowledge(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	var saved bool
	for _, k := range items {
		saved = saved || k.Title == "Changing the delivery address" && strings.Contains(k.Content, "within 12 hours") &&
			len(k.Questions) == 1 && k.Questions[0] == draftQuestion
	}
	if !saved {
		t.Errorf("the saved draft is not among alpha's items: %+v", items)
	}
}
