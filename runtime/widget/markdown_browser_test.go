//go:build integration

package widget_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/internal/testutil/headless"
)

// markdownAnswer is a model's answer with the markdown models write, two citations numbered as the context is
// (the returns item is the second), and what a model must never get into the page: a javascript: link and HTML.
var markdownAnswer = []string{
	"You can return **unworn items** within *60 days* [2].\n\n",
	"For Canada:\n- orders ship within **2 business days** [1]\n- delivery takes 5 to 8 business days [1]\n\n",
	"See [our policy](https://shop.example/returns) or [this](javascript:alert(1)) ",
	"<img src=x onerror=\"window.pwned=1\"> and write to us.",
}

// The widget renders a model's markdown answer as paragraphs, emphasis, a list and links, with its citations as
// numbered links to its sources; the answer as streamed renders as the finished one does, and the finished one
// as it does again from the conversation kept over a reload; nothing of the model's text becomes HTML.
func TestWidgetRendersMarkdownAnswers(t *testing.T) {
	provider := fakellm.New(t, markdownAnswer...)
	provider.Set(func(p *fakellm.Provider) { p.PieceDelay = 300 * time.Millisecond })
	ctx, page := shopAnsweredBy(t, provider)

	// The streamed message's text part is recorded at each change, and its last state before the sources come.
	const record = `(() => { window.streamed = [];
		new MutationObserver(() => { const m = s.querySelectorAll('.m.bot')[1];
			if (m && !m.querySelector('.src')) window.streamed.push(m.querySelector('.tx').innerHTML); })
			.observe(s.querySelector('.log'), {subtree: true, childList: true, characterData: true});
		return true; })()`
	// unlinked is the finished text with its citations' links taken out, as they are while streamed.
	const unlinked = `(() => { const c = s.querySelectorAll('.m.bot')[1].querySelector('.tx').cloneNode(true);
		c.querySelectorAll('.ci a').forEach(a => a.replaceWith(a.textContent)); return c.innerHTML; })()`
	var ok bool
	var streamed []string
	var finished, finishedUnlinked, reloaded, text string
	var items, strong, em, images, jsLinks int
	var pwned bool
	steps := askOn(page, "Can I return things, and how long to Canada?")
	steps = append(steps[:3], append([]chromedp.Action[chromedp.Void]{headless.EvalInWidget(record, &ok)}, steps[3:]...)...)
	err := chromedp.Do(ctx, append(steps,
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && s.querySelector('.m.bot .src') !== null`),
		headless.EvalInWidget(`window.streamed`, &streamed),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].outerHTML`, &finished),
		headless.EvalInWidget(unlinked, &finishedUnlinked),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].querySelector('.tx').textContent`, &text),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot .tx li').length`, &items),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot .tx strong').length`, &strong),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot .tx em').length`, &em),
		headless.EvalInWidget(`s.querySelectorAll('img').length + document.querySelectorAll('body img').length`, &images),
		headless.EvalInWidget(`[...s.querySelectorAll('a')].filter(a => !/^https?:/.test(a.href)).length`, &jsLinks),
		headless.EvalInWidget(`window.pwned === 1`, &pwned),
	)...)
	if err != nil {
		t.Fatalf("asking: %v", err)
	}
	headless.Screenshot(ctx, t, "widget-markdown.png")
	if len(streamed) < 3 {
		t.Fatalf("the answer was not streamed: %d states seen", len(streamed))
	}
	if last := streamed[len(streamed)-1]; last != finishedUnlinked {
		t.Errorf("the streamed answer ends as\n%s\nbut the finished one renders as\n%s", last, finishedUnlinked)
	}
	// Each marker links the source of its number, the model's numbers made the answer's: 1, 2, 2.
	var cites string
	err = chromedp.Do(ctx, headless.EvalInWidget(`[...s.querySelectorAll('.m.bot .ci a')].map(a =>
		a.textContent + (a.href === s.querySelectorAll('.m.bot .src a')[a.textContent - 1].href ? '' : ' ' + a.href)).join(' ')`, &cites))
	if err != nil {
		t.Fatal(err)
	}
	if cites != "1 2 2" {
		t.Errorf("citations %q, want 1 2 2 each linking its source", cites)
	}
	if items != 2 || strong != 2 || em != 1 {
		t.Errorf("%d list items, %d bold, %d italic", items, strong, em)
	}
	if images != 0 || jsLinks != 0 || pwned {
		t.Errorf("model text became HTML: %d images, %d links not to http(s), handler ran %v", images, jsLinks, pwned)
	}
	if !strings.Contains(text, `<img src=x onerror="window.pwned=1">`) || !strings.Contains(text, "or this <img") || strings.Contains(text, "**") {
		t.Errorf("text %q", text)
	}

	err = chromedp.Do(ctx, chromedp.Reload(),
		headless.WaitInWidget(`s && s.querySelectorAll('.m.bot').length === 2`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].outerHTML`, &reloaded))
	if err != nil {
		t.Fatal(err)
	}
	if reloaded != finished {
		t.Errorf("the finished answer renders as\n%s\nand from the kept conversation as\n%s", finished, reloaded)
	}
}

// A cut answer is shown as far as it goes, marked as cut.
func TestWidgetMarksACutAnswer(t *testing.T) {
	provider := fakellm.New(t, "Delivery to Canada takes 5 to")
	provider.Set(func(p *fakellm.Provider) { p.Finish = "length" })
	ctx, page := shopAnsweredBy(t, provider)
	var text string
	err := chromedp.Do(ctx, append(askOn(page, "How long does delivery to Canada take?"),
		headless.WaitInWidget(`s.querySelectorAll('.m.bot').length === 2 && s.querySelector('.m.bot .sg') !== null`),
		headless.EvalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &text))...)
	if err != nil {
		t.Fatalf("asking: %v", err)
	}
	if !strings.Contains(text, "Delivery to Canada takes 5 to") || !strings.Contains(text, "This answer was cut short.") {
		t.Errorf("answer %q", text)
	}
}
