//go:build integration

// Package headless drives Debian's headless Chromium for the browser tests of the widget, the dashboard and
// `parley dev`'s page: starting it, reading the widget's shadow root, and keeping screenshots as test artifacts.
package headless

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium is Debian's headless Chromium, which .ci/run installs; it downloads nothing itself.
const Chromium = "/usr/bin/chromium"

// Start starts a headless Chromium with a window of width by height for the test, and returns the context its
// actions run in, which ends after timeout or with the test. Options add to the browser's flags, such as
// Languages.
func Start(t *testing.T, width, height int, timeout time.Duration, options ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		t.Fatalf("%s is missing: install Debian's chromium package (.ci/run does): %v", Chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Chromium),
		chromedp.NoSandbox, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(width, height))
	opts = append(opts, options...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// Languages sets the browser's languages, most wanted first, as a visitor's settings do: navigator.languages
// and the Accept-Language header.
func Languages(tags string) chromedp.ExecAllocatorOption { return chromedp.Flag("accept-lang", tags) }

// InWidget binds `s` to the widget's shadow root (null before it exists) in a JavaScript expression.
func InWidget(expr string) string {
	return `(() => { const h = document.querySelector('[data-parley]'); const s = h && h.shadowRoot; return (` + expr + `); })()`
}

// WaitInWidget polls an expression over the widget's shadow root (see InWidget) until it is true.
func WaitInWidget(expr string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](InWidget(expr), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := poll(ctx, t); err != nil {
			return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return chromedp.Void{}, nil
	}
}

// EvalInWidget evaluates an expression over the widget's shadow root (see InWidget) into out.
func EvalInWidget[T any](expr string, out *T) chromedp.Action[chromedp.Void] {
	ev := chromedp.Evaluate[T](InWidget(expr))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := ev(ctx, t)
		*out = v
		return chromedp.Void{}, err
	}
}

// Screenshot keeps the whole page as name in $PARLEY_ARTIFACTS (default: parley-artifacts in the temporary
// directory), so that a person can look at what the test saw.
func Screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("PARLEY_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "parley-artifacts")
	}
	// The directory is the test runner's own setting, and name a constant of the test.
	if err := os.MkdirAll(dir, 0o750); err != nil { //nolint:gosec // see above
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o600); err != nil { //nolint:gosec // see above
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
