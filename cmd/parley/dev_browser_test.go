//go:build integration

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley-dev/parley/internal/testutil/headless"
)

// The first look, as README tells a newcomer: parley dev's own page in a real browser, on the runtime's origin,
// shows the demo shop's widget, which loads its settings and answers.
func TestDevPageInBrowser(t *testing.T) {
	_, base, stop := startDev(t, t.TempDir(), "127.0.0.1:0")
	defer stop()
	ctx := headless.Start(t, 1280, 800, time.Minute)
	var answer string
	var refused bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		headless.WaitInWidget(`s && s.querySelector('.l') && s.querySelector('header h2').textContent === 'Acme helper'`),
		headless.EvalInWidget(`(s.querySelector('.l').click(), true)`, new(bool)),
		headless.WaitInWidget(`!s.querySelector('.p').hidden && s.activeElement === s.querySelector('textarea')`),
		headless.WaitInWidget(`s.querySelector('.m.bot') && s.querySelector('.m.bot').textContent.includes('Ask me anything about our gear')`),
		headless.EvalInWidget(`!s.querySelector('.err').hidden`, &refused),
		chromedp.KeyEvent("How long does shipping take?"),
		chromedp.KeyEvent(kb.Enter),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &answer),
	)
	headless.Screenshot(ctx, t, "dev-page.png")
	if err != nil {
		t.Fatalf("chatting on the demo page: %v", err)
	}
	if refused {
		t.Error("the widget shows an error on the demo page")
	}
	if !strings.Contains(answer, "business days") {
		t.Errorf("answer %q does not say how long shipping takes", answer)
	}
}
