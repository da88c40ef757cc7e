package assistant

import "strings"

// maxIdiomGap is how many other words may stand between two words of an idiom ("talk to a real person").
const maxIdiomGap = 3

// idiom is a common way shoppers phrase a question, with the words help pages use for it instead.
type idiom struct {
	// words must occur in this order, each at most maxIdiomGap words after the previous one.
	words []string
	// replace stands in for the words from the first to the last of the idiom.
	replace string
}

// idioms are general shop phrasings, not any one merchant's.
var idioms = []idiom{
	{words: []string{"how", "long"}, replace: "days"},
	{words: []string{"money", "back"}, replace: "refund"},
	{words: []string{"talk", "person"}, replace: "contact"},
	{words: []string{"speak", "person"}, replace: "contact"},
	{words: []string{"talk", "human"}, replace: "contact"},
	{words: []string{"speak", "human"}, replace: "contact"},
}

// rewriteIdioms replaces the idioms found in words. fromIdiom reports, for each word of out, whether a
// replacement put it there; it is nil when there is no idiom, as in most questions.
func rewriteIdioms(words []string) (out []string, fromIdiom []bool) {
	out = make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		end, replace := matchIdiom(words, i)
		if end < 0 {
			out = append(out, words[i])
			if fromIdiom != nil {
				fromIdiom = append(fromIdiom, false)
			}
			continue
		}
		if fromIdiom == nil {
			fromIdiom = make([]bool, len(out), len(words))
		}
		for _, w := range strings.Fields(replace) {
			out = append(out, w)
			fromIdiom = append(fromIdiom, true)
		}
		i = end
	}
	return out, fromIdiom
}

// matchIdiom returns the index of the last word of the first idiom starting at words[start], and its
// replacement; or -1.
func matchIdiom(words []string, start int) (int, string) {
	for _, id := range idioms {
		if id.words[0] != words[start] {
			continue
		}
		if end := matchRest(words, start, id.words[1:]); end >= 0 {
			return end, id.replace
		}
	}
	return -1, ""
}

// matchRest finds rest in words after position pos, each within maxIdiomGap words of the previous one, and returns
// the position of the last; or -1.
func matchRest(words []string, pos int, rest []string) int {
	for _, w := range rest {
		found := -1
		for j := pos + 1; j < len(words) && j <= pos+1+maxIdiomGap; j++ {
			if words[j] == w {
				found = j
				break
			}
		}
		if found < 0 {
			return -1
		}
		pos = found
	}
	return pos
}
