package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromium is Debian's headless Chromium, which .ci/run installs.
const chromium = "/usr/bin/chromium"

// The first look, as README tells a newcomer: parley dev's own page in a real browser, on the runtime's origin,
// shows the demo shop's widget, which loads its settings and answers.
func TestDevPageInBrowser(t *testing.T) {
	_, base, stop := startDev(t, t.TempDir(), "127.0.0.1:0")
	defer stop()
	ctx := devBrowser(t)
	var answer string
	var refused bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		waitInWidget(`s && s.querySelector('.l') && s.querySelector('header h2').textContent === 'Acme helper'`),
		evalInWidget(`(s.querySelector('.l').click(), true)`, new(bool)),
		waitInWidget(`!s.querySelector('.p').hidden && s.activeElement === s.querySelector('textarea')`),
		waitInWidget(`s.querySelector('.m.bot') && s.querySelector('.m.bot').textContent.includes('Ask me anything about our gear')`),
		evalInWidget(`!s.querySelector('.err').hidden`, &refused),
		chromedp.KeyEvent("How long does shipping take?"),
		chromedp.KeyEvent(kb.Enter),
		waitInWidget(`s.querySelectorAll('.m.bot').length === 2`),
		evalInWidget(`s.querySelectorAll('.m.bot')[1].textContent`, &answer),
	)
	shot(ctx, t, "dev-page.png")
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

// devBrowser starts a headless Chromium for the test.
func devBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s is missing: install Debian's chromium package (.ci/run does): %v", chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.NoSandbox, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// inWidget binds `s` to the widget's shadow root (null before it exists) in a JavaScript expression.
func inWidget(expr string) string {
	return `(() => { const h = document.querySelector('[data-parley]'); const s = h && h.shadowRoot; return (` + expr + `); })()`
}

// waitInWidget polls a shadow-root expression until it is true.
func waitInWidget(expr string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](inWidget(expr), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := poll(ctx, t); err != nil {
			return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return chromedp.Void{}, nil
	}
}

// evalInWidget evaluates a shadow-root expression into out.
func evalInWidget[T any](expr string, out *T) chromedp.Action[chromedp.Void] {
	ev := chromedp.Evaluate[T](inWidget(expr))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := ev(ctx, t)
		*out = v
		return chromedp.Void{}, err
	}
}

// shot keeps a screenshot as a test artifact, in $PARLEY_ARTIFACTS or a temporary directory.
func shot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	dir := os.Getenv("PARLEY_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "parley-artifacts")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
