package llm

import (
	"testing"

	"github.com/openai/openai-go/v3"
)

// TestTokensAreCountedWithTheModelsEncoding: the counts are o200k_base's, as OpenAI's tokenizer gives them, not
// an estimate from the text's length.
func TestTokensAreCountedWithTheModelsEncoding(t *testing.T) {
	c := newCounter()
	for text, want := range map[string]int64{"hello world": 2, "": 0, "Lieferung nach Kanada": 5} {
		if got := c.count(text); got != want {
			t.Errorf("count(%q) = %d, want %d", text, got, want)
		}
	}
	u := c.usage([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage("hello world"), openai.UserMessage("hello world")}, "hello world")
	if u.PromptTokens != 2*(tokensPerMessage+2)+tokensPerReply || u.CompletionTokens != 2 {
		t.Errorf("usage %+v", u)
	}
}
