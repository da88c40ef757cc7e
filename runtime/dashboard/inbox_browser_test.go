//go:build integration

package dashboard_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/headless"
)

// Two pages: the shop with the widget, and the dashboard's inbox, signed in. The visitor asks for a person; the
// inbox sees it arrive without a reload and is told; the team member answers, and the widget shows the answer live
// with its author; the bot stays silent meanwhile; the team gives the conversation back and the bot answers again.
func TestInboxAndWidgetInBrowser(t *testing.T) {
	e := newEnv(t)
	team := headless.Start(t, 1280, 900, 2*time.Minute)
	visitor, cancel := chromedp.NewContext(team) // a second tab of the same browser
	t.Cleanup(cancel)

	err := chromedp.Do(team,
		chromedp.Navigate(e.url+"/dashboard/inbox"),
		waitFor(`location.href.startsWith(`+fmt.Sprintf("%q", e.idp)+`) && !!document.querySelector('#email')`),
		chromedp.SendKeys("#email", "alpha@owners.example"),
		chromedp.Click("button[type=submit]"),
		waitFor(`location.pathname === '/dashboard/' || location.pathname === '/dashboard/inbox'`),
		chromedp.Navigate(e.url+"/dashboard/inbox"),
		bodyHas("Nobody is waiting."),
	)
	if err != nil {
		t.Fatalf("opening the inbox: %v", err)
	}

	// The team's inbox is open: the visitor who asks in words is told someone is there.
	err = chromedp.Do(visitor,
		chromedp.Navigate(e.shop),
		headless.WaitInWidget(`!!(s && s.querySelector('.l'))`),
		headless.EvalInWidget(`(s.querySelector('.l').click(), true)`, new(bool)),
		chromedp.KeyEvent("Can I talk to a human?"), chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`[...s.querySelectorAll('.m.bot')].some(m => m.textContent.includes("I've asked a person from the team"))`),
	)
	if err != nil {
		t.Fatalf("asking for a person: %v", err)
	}

	// The inbox shows it without a reload, and says so.
	err = chromedp.Do(team,
		waitFor(`!!document.querySelector('tr.waiting') && !document.querySelector('#new-waiting').hidden`),
		waitFor(`document.title.startsWith('(1) ')`),
	)
	if err != nil {
		t.Fatalf("the inbox did not see the waiting conversation: %v", err)
	}
	saveScreenshot(team, t, "dashboard-inbox.png")

	err = chromedp.Do(team,
		chromedp.Click(`tr.waiting a`),
		bodyHas("waiting for a person"),
		bodyHas("Can I talk to a human?"),
		chromedp.SendKeys("#reply-text", "Hi, Anna here. How can I help?"),
		chromedp.SendKeys("#reply-author", "Anna"),
		chromedp.Click(`form.reply button[type=submit]`),
		bodyHas("Your message was sent"),
		bodyHas("with the team"),
	)
	if err != nil {
		t.Fatalf("answering: %v", err)
	}

	// The widget shows the answer live, with its author; the visitor's next message gets no bot answer and
	// reaches the team's open conversation page without a reload.
	err = chromedp.Do(visitor,
		headless.WaitInWidget(`!!s.querySelector('.m.agent') && s.querySelector('.m.agent .au').textContent === 'Anna from Shop alpha'`),
		chromedp.KeyEvent("My order 1234 never arrived"), chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.you').length === 2 && s.querySelector('.t').offsetParent === null`),
	)
	if err != nil {
		t.Fatalf("the widget with the team: %v", err)
	}
	var bots int
	if err := chromedp.Do(visitor, headless.EvalInWidget(`s.querySelectorAll('.m.bot').length`, &bots)); err != nil {
		t.Fatal(err)
	}
	if bots != 2 { // the greeting and the notice
		t.Errorf("%d bot messages while the team has the conversation, want 2", bots)
	}
	headless.Screenshot(visitor, t, "widget-with-the-team.png")
	if err := chromedp.Do(team, bodyHas("My order 1234 never arrived")); err != nil {
		t.Fatalf("the visitor's message did not reach the team's page: %v", err)
	}
	saveScreenshot(team, t, "dashboard-conversation-live.png")

	// Given back, the bot answers again.
	err = chromedp.Do(team, chromedp.Click(`form[action$="/release"] button`), bodyHas("The assistant answers the conversation again"))
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	err = chromedp.Do(visitor,
		chromedp.KeyEvent("How long does delivery to Canada take?"), chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 3`),
	)
	if err != nil {
		t.Fatalf("the bot after the release: %v", err)
	}
}
