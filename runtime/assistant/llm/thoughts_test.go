package llm

import (
	"strings"
	"testing"
)

// TestThoughtsAreSplitFromTheAnswerWhereverThePiecesBreak: the content is cut into two pieces at every byte, and
// into pieces of every size, so that each tag is split every way it can be.
func TestThoughtsAreSplitFromTheAnswerWhereverThePiecesBreak(t *testing.T) {
	for _, tc := range []struct{ content, answer string }{
		{"<think>NO_ANSWER? no: [1] says it.</think>\n\nIt takes 5 days [1].", "\n\nIt takes 5 days [1]."},
		{"No thoughts, a < b and <b>bold</b>.", "No thoughts, a < b and <b>bold</b>."},
		{"<think>a</think>One <think>b</think>two.", "One two."},
		{"Ends with <thin", "Ends with <thin"},
		// Cut inside a thought: nothing of it is an answer.
		{"<think>still thinking", ""},
	} {
		for size := 1; size <= len(tc.content); size++ {
			var think thoughts
			var answer strings.Builder
			for i := 0; i < len(tc.content); i += size {
				answer.WriteString(think.answer(tc.content[i:min(i+size, len(tc.content))]))
			}
			answer.WriteString(think.end())
			if answer.String() != tc.answer {
				t.Errorf("%q in pieces of %d: answer %q", tc.content, size, answer.String())
			}
		}
	}
}
