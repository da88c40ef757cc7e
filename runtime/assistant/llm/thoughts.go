package llm

import "strings"

// The tags around a model's reasoning in its content: llama.cpp's server and vLLM without a reasoning parser,
// and Ollama's OpenAI endpoint for thinking models, stream DeepSeek-R1's and Qwen3's thoughts this way. Models
// whose chat template opens the block in the prompt (DeepSeek-R1's distillations, QwQ) send only the closing tag.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thoughts separates the <think>…</think> blocks of a model's content from its answer as the pieces arrive, a
// tag possibly split across pieces. Its zero value is outside a block; a model known to send only the closing
// tag starts inside one.
type thoughts struct {
	inside bool
	// lone counts the closing tags that came outside a block: what came before each was a thought, not an
	// answer.
	lone int
	// held is the end of the pieces so far that may be the start of a tag.
	held string
	text strings.Builder
}

// add takes the next piece of content, keeping what of it is answer and dropping thoughts; the start of a tag
// is held until the next piece says whether it is one.
func (t *thoughts) add(piece string) {
	s := t.held + piece
	t.held = ""
	for s != "" {
		i, tag := strings.Index(s, thinkClose), thinkClose
		if !t.inside {
			if j := strings.Index(s, thinkOpen); j >= 0 && (i < 0 || j < i) {
				i, tag = j, thinkOpen
			}
		}
		if i < 0 {
			keep := max(partialSuffix(s, thinkClose), partialSuffix(s, thinkOpen))
			if !t.inside {
				t.text.WriteString(s[:len(s)-keep])
			}
			t.held = s[len(s)-keep:]
			return
		}
		switch {
		case t.inside:
			t.inside = false
		case tag == thinkOpen:
			t.text.WriteString(s[:i])
			t.inside = true
		default:
			// A closing tag outside a block: the block was opened by the prompt, and all so far was a thought.
			t.text.Reset()
			t.lone++
		}
		s = s[i+len(tag):]
	}
}

// end adds the held text that proved not to be a tag when the content ends; none when the content ended inside
// a block, whose thought is no answer.
func (t *thoughts) end() {
	if !t.inside {
		t.text.WriteString(t.held)
	}
	t.held = ""
}

// answer is the answer so far.
func (t *thoughts) answer() string { return t.text.String() }

// partialSuffix is the length of the longest end of s that begins tag without being all of it.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
