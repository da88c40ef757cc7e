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
		// The block opened by the chat template: only its end is sent.
		{"The visitor asks about NO_ANSWER? No, [1] says it.\n</think>\n\nIt takes 5 days [1].", "\n\nIt takes 5 days [1]."},
		{"a thought</think>One <think>b</think>two.", "One two."},
	} {
		for size := 1; size <= len(tc.content); size++ {
			var think thoughts
			for i := 0; i < len(tc.content); i += size {
				think.add(tc.content[i:min(i+size, len(tc.content))])
			}
			think.end()
			if think.answer() != tc.answer {
				t.Errorf("%q in pieces of %d: answer %q", tc.content, size, think.answer())
			}
		}
	}
}

// TestAModelKnownToThinkUnopenedStartsInsideABlock: once learned, nothing before the lone </think> is an answer,
// so nothing of the thought is streamed.
func TestAModelKnownToThinkUnopenedStartsInsideABlock(t *testing.T) {
	think := thoughts{inside: true}
	for _, piece := range []string{"Item 1 says ", "five days.\n</th", "ink>\n\nFive days [1]."} {
		think.add(piece)
		if a := think.answer(); strings.Contains(a, "Item") || strings.Contains(a, "</") {
			t.Fatalf("after %q: answer %q holds the thought", piece, a)
		}
	}
	think.end()
	if think.answer() != "\n\nFive days [1]." {
		t.Errorf("answer %q", think.answer())
	}
}
