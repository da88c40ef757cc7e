//go:build integration

package widget_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/headless"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
)

// After an answer the assistant could not give, the visitor asks for a person with the widget's button, is told
// honestly that nobody is there yet, and sees the team's reply arrive live with its author; the bot stays silent;
// a reload keeps the conversation and its stream; once the team gives the conversation back, the bot answers.
func TestWidgetTalksToAPerson(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	// The team writes through a service of its own on the same store, as another replica would.
	team, err := chat.New(chat.Config{Store: rt.store, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	shop := &tenant.Bundle{MerchantID: "shop", DisplayName: "Shop shop"}
	ctx := headless.Start(t, 1280, 800, 2*time.Minute)

	var notice string
	err = chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`s && s.querySelector('.l') && s.querySelector('header h2').textContent === 'Ask shop'`),
		click(".l"),
		key("Do you sell bicycles?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelector('.lead .pp') && s.querySelector('.lead .pp').offsetParent !== null`),
		headless.WaitInWidget(`s.querySelector('.lead .pp').textContent === 'Talk to a person'`),
		headless.EvalInWidget(`(s.querySelector('.lead .pp').click(), true)`, new(bool)),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[2].textContent`, &notice),
	)
	if err != nil {
		t.Fatalf("asking for a person: %v", err)
	}
	if !strings.Contains(notice, "Nobody from the team is available") {
		t.Errorf("the notice %q, want the honest one: nobody is there", notice)
	}
	var id string
	if err := chromedp.Do(ctx, conversationID(&id)); err != nil {
		t.Fatal(err)
	}

	// Waiting, the bot is silent: the visitor's message is stored and nothing answers it.
	err = chromedp.Do(ctx, key("Hello?"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.you').length === 2 && s.querySelector('.t').offsetParent === null`))
	if err != nil {
		t.Fatalf("a message while waiting: %v", err)
	}
	if _, _, err := team.PostTeamMessage(t.Context(), shop, id, chat.TeamMessage{Text: "Hi, Anna here. We sell kayaks, not bicycles.", Author: "Anna"}); err != nil {
		t.Fatal(err)
	}
	var who string
	err = chromedp.Do(ctx,
		headless.WaitInWidget(`s.querySelector('.m.agent') && s.querySelector('.m.agent').textContent.includes('kayaks')`),
		headless.EvalInWidget(`s.querySelector('.m.agent .au').textContent`, &who),
	)
	if err != nil {
		t.Fatalf("the team's reply did not arrive live: %v", err)
	}
	if who != "Anna from Shop shop" {
		t.Errorf("the reply's author %q, want %q", who, "Anna from Shop shop")
	}
	if n := countIn(ctx, t, `s.querySelectorAll('.m.bot').length`); n != 3 {
		t.Errorf("%d bot messages while the team has the conversation, want 3 (greeting, answer, notice)", n)
	}
	headless.Screenshot(ctx, t, "widget-handoff.png")

	// A reload keeps the reply, and the stream resumes after it: the next reply arrives once.
	err = chromedp.Do(ctx, chromedp.Reload(),
		headless.WaitInWidget(`s && s.querySelectorAll('.m.agent').length === 1`))
	if err != nil {
		t.Fatalf("after a reload: %v", err)
	}
	if _, _, err := team.PostTeamMessage(t.Context(), shop, id, chat.TeamMessage{Text: "Anything else?", Author: "Anna"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, headless.WaitInWidget(`s.querySelectorAll('.m.agent').length === 2`)); err != nil {
		t.Fatalf("the reply after the reload: %v", err)
	}

	// Released, the bot answers again.
	if _, err := team.Release(t.Context(), shop, id); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, click(".l"), key("How long does delivery to Canada take?"), key(kb.Enter),
		headless.WaitInWidget(`Array.from(s.querySelectorAll('.m.bot')).some(function (m) { return m.textContent.includes('5 to 8 business days'); })`))
	if err != nil {
		t.Fatalf("the bot after the release: %v", err)
	}
	if n := countIn(ctx, t, `s.querySelectorAll('.m.agent').length`); n != 2 {
		t.Errorf("%d team messages after the release, want 2", n)
	}
}

func countIn(ctx context.Context, t *testing.T, expr string) int {
	t.Helper()
	var n int
	if err := chromedp.Do(ctx, headless.EvalInWidget(expr, &n)); err != nil {
		t.Fatal(err)
	}
	return n
}

// When the team closes the conversation, the widget asks the visitor's 1 to 5 rating of it through the live stream,
// at the end of the log, as it asks when the visitor starts a new conversation; the rating is stored, and starting a
// new conversation afterwards does not ask it again.
func TestWidgetAsksTheRatingWhenTheTeamCloses(t *testing.T) {
	rt := newRuntime(t)
	page := newShop(t)
	page.embed(rt.url, rt.merchant(t, "shop", page.url, 100), "shop")
	team, err := chat.New(chat.Config{Store: rt.store, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	shop := &tenant.Bundle{MerchantID: "shop", DisplayName: "Shop shop"}
	ctx := headless.Start(t, 1280, 800, 2*time.Minute)
	err = chromedp.Do(ctx,
		chromedp.Navigate(page.url),
		headless.WaitInWidget(`!!s && !!s.querySelector('.l')`),
		click(".l"),
		key("I want to talk to a person"), key(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
	)
	if err != nil {
		t.Fatalf("asking for a person: %v", err)
	}
	var id string
	if err := chromedp.Do(ctx, conversationID(&id)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := team.PostTeamMessage(t.Context(), shop, id, chat.TeamMessage{Text: "Hi, Anna here. All sorted?", Author: "Anna"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, headless.WaitInWidget(`!!s.querySelector('.m.agent')`)); err != nil {
		t.Fatalf("the team's reply: %v", err)
	}
	if n := countIn(ctx, t, `s.querySelectorAll('.cs').length`); n != 0 {
		t.Fatalf("the rating is asked before the conversation ended (%d cards)", n)
	}
	if _, err := team.Close(t.Context(), shop, id); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		headless.WaitInWidget(`!!s.querySelector('.cs') && s.querySelector('.log').lastElementChild === s.querySelector('.cs')`),
	)
	if err != nil {
		t.Fatalf("the rating after the team closed: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-satisfaction-closed.png")
	err = chromedp.Do(ctx,
		click(".cs div button:nth-child(5)"),
		headless.WaitInWidget(`!!s.querySelector('.cs .thx')`),
		click(".fresh"),
		headless.WaitInWidget(`s.querySelectorAll('.m').length === 1`),
	)
	if err != nil {
		t.Fatalf("rating the closed conversation: %v", err)
	}
	if n := countIn(ctx, t, `s.querySelectorAll('.cs').length`); n != 0 {
		t.Errorf("a new conversation asked the rating of the closed one again (%d cards)", n)
	}
	if _, sat, err := rt.store.ConversationRatings(t.Context(), "shop", id); err != nil || sat == nil || sat.Score != 5 {
		t.Errorf("the closed conversation's rating: %+v, %v; want 5", sat, err)
	}
}
