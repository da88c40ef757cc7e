package llm

import (
	"encoding/json"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/parley-dev/parley/runtime/assistant"
)

// tokensPerMessage is what OpenAI's chat format adds to each message's text (its role and delimiters), and
// tokensPerReply what primes the reply, as OpenAI's cookbook counts them.
const (
	tokensPerMessage = 3
	tokensPerReply   = 3
)

// counter counts tokens where a server reports no usage (LM Studio, older Ollama, a server refusing
// stream_options), so that the plan's monthly tokens and the analytics still hold. It uses o200k_base, the
// encoding of OpenAI's current models, embedded in the binary; for other families (Llama, Qwen, Mistral), whose
// tokenizers differ, its count is an estimate.
type counter struct {
	codec func() *codec.Codec
}

// newCounter returns a counter that loads its encoding when it first counts: most servers report usage, and the
// encoding's table takes memory.
func newCounter() counter { return counter{codec: sync.OnceValue(codec.NewO200kBase)} }

// count is the tokens of text.
func (c counter) count(text string) int64 {
	n, err := c.codec().Count(text)
	if err != nil { // only text that is not UTF-8, which the default mode replaces, could fail
		return int64(tokens(text))
	}
	return int64(n)
}

// usage is the usage of a request of msgs answered with completion (its answer and its reasoning).
func (c counter) usage(msgs []openai.ChatCompletionMessageParamUnion, completion string) assistant.Usage {
	var prompt int64 = tokensPerReply
	raw, err := json.Marshal(msgs)
	var contents []struct {
		Content string `json:"content"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &contents)
	}
	if err != nil { // the messages are the runtime's own strings: this does not happen
		return assistant.Usage{}
	}
	for _, m := range contents {
		prompt += tokensPerMessage + c.count(m.Content)
	}
	return assistant.Usage{PromptTokens: prompt, CompletionTokens: c.count(completion)}
}
