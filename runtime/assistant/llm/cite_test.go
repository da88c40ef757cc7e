package llm

import (
	"slices"
	"strings"
	"testing"
)

// TestCitationsAreRenumberedAsSourcesWhereverThePiecesBreak: the markers name the answer's sources in the order
// first cited, whatever the model numbered, and the text given piece by piece is always the start of the final
// one, the answer cut into pieces of every size.
func TestCitationsAreRenumberedAsSourcesWhereverThePiecesBreak(t *testing.T) {
	for _, tc := range []struct {
		model, want string
		cited       []int
	}{
		{"Free returns [3], and 5 days [1][3].", "Free returns [1], and 5 days [2][1].", []int{2, 0}},
		{"Both say so [2, 1].", "Both say so [1][2].", []int{1, 0}},
		{"No item 9 [9], nor 0 [0]; but [4 , 9].", "No item 9 , nor 0 ; but [1].", []int{3}},
		{"A [note] and a list [a] stay; [1] ends", "A [note] and a list [a] stay; [1] ends", []int{0}},
		{"Ends in a bracket [", "Ends in a bracket [", nil},
		{"Ends in a number [2", "Ends in a number [2", nil},
	} {
		for size := 1; size <= len(tc.model); size++ {
			c := newCiter(4)
			var streamed string
			for i := size; ; i += size {
				got := c.text(tc.model[:min(i, len(tc.model))], false)
				if !strings.HasPrefix(got, streamed) {
					t.Fatalf("%q in pieces of %d: %q does not go on from %q", tc.model, size, got, streamed)
				}
				streamed = got
				if i >= len(tc.model) {
					break
				}
			}
			if got := c.text(tc.model, true); got != tc.want || !strings.HasPrefix(got, streamed) || !slices.Equal(c.cited, tc.cited) {
				t.Errorf("%q in pieces of %d: %q citing %v, want %q citing %v", tc.model, size, got, c.cited, tc.want, tc.cited)
			}
		}
	}
}
