package llm

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	// citation matches a citation such as [2] or [1, 3].
	citation = regexp.MustCompile(`\[(\d+(?:\s*,\s*\d+)*)\]`)
	// citationStart matches the end of a text that may become a citation with the next piece.
	citationStart = regexp.MustCompile(`\[[\d,\s]*$`)
)

// citer renumbers the model's citations as the answer arrives, so that a marker [n] names the answer's n-th
// source: the model numbers the context's items, but an answer's sources are the items it cites, in the order it
// first cites them. [3, 1] becomes [1][2], and a number the context has no item for is dropped. The renumbered
// text only ever grows, so what was streamed is the start of what is stored.
type citer struct {
	// items is how many items the context numbered.
	items int
	// cited are the context's indexes (from 0) of the cited items, in the order first cited.
	cited []int
	shown map[int]int
	// done is how much of the model's text is renumbered into out.
	done int
	out  strings.Builder
}

func newCiter(items int) *citer { return &citer{items: items, shown: map[int]int{}} }

// text renumbers the model's answer so far, whose start was given before, and returns the renumbered answer. A
// possible citation at its end is held back until more text says what it is, or final.
func (c *citer) text(answer string, final bool) string {
	rest := answer[c.done:]
	if !final {
		if loc := citationStart.FindStringIndex(rest); loc != nil {
			rest = rest[:loc[0]]
		}
	}
	last := 0
	for _, m := range citation.FindAllStringSubmatchIndex(rest, -1) {
		c.out.WriteString(rest[last:m[0]])
		for n := range strings.SplitSeq(rest[m[2]:m[3]], ",") {
			if i, err := strconv.Atoi(strings.TrimSpace(n)); err == nil && i >= 1 && i <= c.items {
				c.out.WriteString("[" + strconv.Itoa(c.number(i-1)) + "]")
			}
		}
		last = m[1]
	}
	c.out.WriteString(rest[last:])
	c.done += len(rest)
	return c.out.String()
}

// number is the marker of the context's item i, given on its first citation.
func (c *citer) number(i int) int {
	if n, ok := c.shown[i]; ok {
		return n
	}
	c.cited = append(c.cited, i)
	c.shown[i] = len(c.cited)
	return len(c.cited)
}
