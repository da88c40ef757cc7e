package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"

	"github.com/parley-dev/parley/runtime/assistant"
)

const (
	// noAnswer is what the model is told to reply when the context does not answer the question.
	noAnswer = "NO_ANSWER"
	// maxItemRunes bounds one knowledge item in the prompt, so that one long page does not crowd out the rest.
	maxItemRunes = 2000
	// maxItemQuestions is how many of an item's listed questions the prompt gives with it (at most 200
	// characters each).
	maxItemQuestions = 5
	// maxSnippetRunes bounds the snippet of a cited item.
	maxSnippetRunes = 200
	// maxUncitedSources is how many retrieved items are given as sources when the model cites none.
	maxUncitedSources = 3
	// runesPerToken estimates tokens from text length without the model's tokenizer.
	runesPerToken = 4
)

// rules are the grounding rules of the system prompt.
const rules = `You are the customer service assistant on a shop's website.
Answer the visitor's question using only the numbered context items below; never use other knowledge.
Cite every item you use by its number in square brackets, like [1].
If the context does not answer the question, reply with exactly ` + noAnswer + ` and nothing else.
Answer in the language the visitor writes in. Keep answers short: a few sentences.`

// prompt builds the messages of a request: the system prompt with the rules, the merchant's instructions, the
// visitor's or the site's language and the numbered context, then the conversation's turns history, then the
// visitor's message.
func prompt(req assistant.Request, hits []assistant.Hit, history []assistant.Turn) []openai.ChatCompletionMessageParamUnion {
	var sys strings.Builder
	sys.WriteString(rules)
	switch visitor, site := strings.TrimSpace(req.Language), strings.TrimSpace(req.Locale); {
	case visitor != "":
		fmt.Fprintf(&sys, "\nThe visitor's chat is in %s; use that language when the message's is unclear.", visitor)
	case site != "":
		fmt.Fprintf(&sys, "\nThe site's language is %s; use it when the visitor's language is unclear.", site)
	}
	if in := strings.TrimSpace(req.Instructions); in != "" {
		sys.WriteString("\n\nThe shop's instructions:\n")
		sys.WriteString(in)
	}
	sys.WriteString("\n\nContext:")
	if len(hits) == 0 {
		sys.WriteString("\n(none)")
	}
	for i, h := range hits {
		fmt.Fprintf(&sys, "\n\n[%d] %s", i+1, h.Item.Title)
		if h.Item.URL != "" {
			fmt.Fprintf(&sys, " (%s)", h.Item.URL)
		}
		if qs := h.Item.Questions; len(qs) > 0 {
			// The merchant's word that the item answers these; a few say what it is for.
			fmt.Fprintf(&sys, "\nAnswers questions such as: %s", strings.Join(qs[:min(len(qs), maxItemQuestions)], " / "))
		}
		sys.WriteString("\n")
		sys.WriteString(cut(h.Item.Content, maxItemRunes))
	}
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(sys.String())}
	for _, t := range history {
		if t.Visitor {
			msgs = append(msgs, openai.UserMessage(t.Text))
		} else {
			msgs = append(msgs, openai.AssistantMessage(t.Text))
		}
	}
	return append(msgs, openai.UserMessage(req.Message))
}

// recent returns the latest turns of history whose estimated tokens fit in budget, oldest first.
func recent(history []assistant.Turn, budget int) []assistant.Turn {
	start := len(history)
	for start > 0 {
		cost := tokens(history[start-1].Text)
		if cost > budget {
			break
		}
		budget -= cost
		start--
	}
	return history[start:]
}

// promptTokens estimates the tokens of a request's messages from their JSON, a little above their text's.
func promptTokens(msgs []openai.ChatCompletionMessageParamUnion) int {
	b, err := json.Marshal(msgs)
	if err != nil {
		return 0
	}
	return utf8.RuneCount(b) / runesPerToken
}

// tokens estimates the tokens of a message, with a few for its role.
func tokens(text string) int { return utf8.RuneCountInString(text)/runesPerToken + 4 }

// retrievalQuery is what the knowledge is searched with: the message, and the visitor's previous message, so that
// a follow-up ("and how long does that take?") finds the items of the question it follows.
func retrievalQuery(req assistant.Request) string {
	for i := len(req.History) - 1; i >= 0; i-- {
		if req.History[i].Visitor {
			return req.Message + "\n" + req.History[i].Text
		}
	}
	return req.Message
}

// readAnswer turns the model's answer, its citations renumbered by c, into a reply: a refusal becomes the
// merchant's fallback, counted as unanswered; otherwise the sources are the cited items, or the top retrieved
// ones when none is cited.
func readAnswer(req assistant.Request, answer string, c *citer, hits []assistant.Hit) assistant.Reply {
	if strings.Contains(answer, noAnswer) {
		return assistant.Fallback(req)
	}
	sources := cited(c, hits)
	if len(sources) == 0 {
		for _, h := range hits[:min(len(hits), maxUncitedSources)] {
			sources = append(sources, source(h))
		}
	}
	return assistant.Reply{Text: answer, Sources: sources, Kind: assistant.KindAnswer, Answered: true}
}

// cited are the sources c's markers name, in their order.
func cited(c *citer, hits []assistant.Hit) []assistant.Source {
	var sources []assistant.Source
	for _, i := range c.cited {
		sources = append(sources, source(hits[i]))
	}
	return sources
}

// source describes a retrieved item as a citation.
func source(h assistant.Hit) assistant.Source {
	return assistant.Source{KnowledgeID: h.Item.ID, Title: h.Item.Title, URL: h.Item.URL,
		Snippet: cut(h.Item.Content, maxSnippetRunes), Score: h.Score}
}

// cut shortens s to at most n runes, at a word boundary when there is one, marking the cut with an ellipsis.
func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	out := string(r)
	if i := strings.LastIndexByte(out, ' '); i > n/2 {
		out = out[:i]
	}
	return out + "…"
}
