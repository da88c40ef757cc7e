package llm

import "strings"

// The tags around a model's reasoning in its content: llama.cpp's server and vLLM without a reasoning parser,
// and Ollama's OpenAI endpoint for thinking models, stream DeepSeek-R1's and Qwen3's thoughts this way.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thoughts separates the <think>…</think> blocks of a model's content from its answer as the pieces arrive, a
// tag possibly split across pieces. Its zero value is outside a block.
type thoughts struct {
	inside bool
	// held is the end of the pieces so far that may be the start of a tag.
	held string
}

// answer takes the next piece of content and returns what of it is answer, dropping thoughts; the start of a
// tag is held until the next piece says whether it is one.
func (t *thoughts) answer(piece string) string {
	s := t.held + piece
	t.held = ""
	var a strings.Builder
	for s != "" {
		tag := thinkOpen
		if t.inside {
			tag = thinkClose
		}
		i := strings.Index(s, tag)
		if i < 0 {
			keep := partialSuffix(s, tag)
			if !t.inside {
				a.WriteString(s[:len(s)-keep])
			}
			t.held = s[len(s)-keep:]
			break
		}
		if !t.inside {
			a.WriteString(s[:i])
		}
		s, t.inside = s[i+len(tag):], !t.inside
	}
	return a.String()
}

// end returns the held text that proved not to be a tag when the content ends; none when the content ended
// inside a block, whose thought is no answer.
func (t *thoughts) end() string {
	held := t.held
	t.held = ""
	if t.inside {
		return ""
	}
	return held
}

// partialSuffix is the length of the longest end of s that begins tag without being all of it.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
