package dashboard

import "testing"

// TestCSVSafeRoundTrip checks that a cell csvSafe writes never reads as a formula and that fromCSVSafe gives back
// what was written, apostrophes included, while a hand-written cell that starts with one keeps it.
func TestCSVSafeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "hello", "=1+1", "+1 for next-day delivery?", "-", "@home", "\tx", "\rx",
		"'", "''", "'hello", "'=1", "'+1 for next-day delivery?", "''=1"} {
		out := csvSafe(s)
		if formulaStart(out) {
			t.Errorf("csvSafe(%q) = %q reads as a formula", s, out)
		}
		if back := fromCSVSafe(out); back != s {
			t.Errorf("fromCSVSafe(csvSafe(%q)) = %q", s, back)
		}
	}
	for _, hand := range []string{"'hello", "it's", "'"} {
		if got := fromCSVSafe(hand); got != hand {
			t.Errorf("fromCSVSafe(%q) = %q, want it kept", hand, got)
		}
	}
}
