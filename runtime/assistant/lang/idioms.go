package lang

import "strings"

// maxIdiomGap is how many other words may stand between two words of an idiom ("talk to a real person").
const maxIdiomGap = 3

// idiom is a common way visitors phrase a question, with the words help pages use for it instead, or the marker
// of the answer type it asks for (see answertype.go).
type idiom struct {
	// words must occur in this order, each at most maxIdiomGap words after the previous one.
	words []string
	// replace stands in for the words from the first to the last of the idiom; when it is empty, they stay.
	replace string
	// mark is the marker of the answer type the idiom asks for, put in after it (see answertype.go).
	mark string
	// first is set for an idiom that only a message's first word starts: "when" opens a question, but inside
	// one it mostly joins two clauses ("my gums bleed when I brush").
	first bool
}

// RewriteIdioms replaces the language's idioms found in words, or puts their answer type's marker in after them.
// fromIdiom reports, for each word of out, whether an idiom put it there; it is nil when there is no idiom, as in
// most questions.
func (l *Language) RewriteIdioms(words []string) (out []string, fromIdiom []bool) {
	return rewriteIdioms(words, l.idioms)
}

// rewriteIdioms is RewriteIdioms with a list of idioms.
func rewriteIdioms(words []string, idioms []idiom) (out []string, fromIdiom []bool) {
	out = make([]string, 0, len(words)+1)
	for i := 0; i < len(words); i++ {
		id, end := matchIdiom(words, i, idioms)
		if id == nil {
			out = append(out, words[i])
			if fromIdiom != nil {
				fromIdiom = append(fromIdiom, false)
			}
			continue
		}
		if fromIdiom == nil {
			fromIdiom = make([]bool, len(out), len(words)+1)
		}
		if id.replace == "" {
			out = append(out, words[i:end+1]...)
			fromIdiom = append(fromIdiom, make([]bool, end+1-i)...)
		}
		for _, w := range strings.Fields(id.replace + " " + id.mark) {
			out = append(out, w)
			fromIdiom = append(fromIdiom, true)
		}
		i = end
	}
	return out, fromIdiom
}

// matchIdiom returns the first idiom starting at words[start] and the index of its last word; or nil.
func matchIdiom(words []string, start int, idioms []idiom) (*idiom, int) {
	for i := range idioms {
		id := &idioms[i]
		if id.words[0] != words[start] || id.first && start > 0 {
			continue
		}
		if end := matchRest(words, start, id.words[1:]); end >= 0 {
			return id, end
		}
	}
	return nil, -1
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
