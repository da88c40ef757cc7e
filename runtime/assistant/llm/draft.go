package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/openai/openai-go/v3"

	"github.com/parley-dev/parley/runtime/assistant"
)

// draftRules are the system prompt's rules for drafting an article of the merchant's knowledge base.
const draftRules = `You write articles for a shop's help center, which its customer service assistant answers visitors from.
Visitors asked the questions below and the assistant could not answer them well. Write one short article that answers them.
Use only the facts of the shop's knowledge base and of the conversations below; never invent prices, times, policies or contacts.
Where the article needs a fact they do not give, write a placeholder in square brackets, like [delivery time], for the shop to fill in.
Reply with the article's title alone on the first line, then a blank line, then the article in plain text: a few sentences or a short list.`

const (
	// maxDraftConversations and maxDraftTurnRunes bound the conversations a draft's prompt quotes.
	maxDraftConversations = 3
	maxDraftTurnRunes     = 500
	// maxDraftTitleRunes bounds a drafted title, as the knowledge form does.
	maxDraftTitleRunes = 200
)

// CanDraft implements assistant.Drafter: the runtime declares the model, so that Respond asks it.
func (r *Responder) CanDraft(provider, model string) bool {
	_, ok := r.targets.get(provider, model)
	return ok
}

// Draft implements assistant.Drafter: it asks the request's model for an article, with the model's own timeouts
// and answer tokens, and learns of a parameter the model refuses as Respond does. Unlike Respond it never falls
// back to the offline assistant: a failed draft is an error, which the merchant sees and may try again.
func (r *Responder) Draft(ctx context.Context, req assistant.DraftRequest) (assistant.Draft, error) {
	t, ok := r.targets.get(req.Provider, req.Model)
	if !ok {
		return assistant.Draft{}, assistant.ErrNoModel
	}
	msgs := draftPrompt(req)
	asked, cancel := context.WithTimeout(ctx, t.model.Timeouts.Overall)
	defer cancel()
	w := r.accepts.get(t.key)
	for {
		d, err := r.draftOnce(asked, req, t, msgs, w)
		next, ok := corrected(w, err)
		if !ok {
			return d, r.draftError(ctx, t, err)
		}
		r.accepts.learn(t.key, next)
		w = next
	}
}

// draftError classifies a draft's failure, logged with its cause (the provider's status and URL, never the key).
func (r *Responder) draftError(ctx context.Context, t *target, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("drafting: %w", ctx.Err())
	}
	kind := assistant.ErrModelFailed
	if errors.Is(err, errFirstToken) || errors.Is(err, errIdle) || errors.Is(err, context.DeadlineExceeded) {
		kind = assistant.ErrModelTimedOut
	}
	r.log.WarnContext(ctx, "the model did not draft an article", "provider", t.provider, "model", t.model.Name, "error", err.Error())
	return fmt.Errorf("drafting with model %s: %w", t.model.Name, kind)
}

// draftOnce asks the model once with the parameters w and reads its article. The model's reasoning is counted but
// is no part of the article.
func (r *Responder) draftOnce(ctx context.Context, req assistant.DraftRequest, t *target, msgs []openai.ChatCompletionMessageParamUnion, w wire) (assistant.Draft, error) {
	c, err := r.complete(ctx, t, req.APIKey, msgs, w, nil)
	if err != nil {
		return assistant.Draft{}, err
	}
	title, content := readDraft(c.think.answer())
	if content == "" {
		return assistant.Draft{}, errEmpty
	}
	if title == "" && len(req.Questions) > 0 {
		title = req.Questions[0]
	}
	usage := c.usage
	if !c.reported {
		usage = r.counter.usage(msgs, c.text.String())
	}
	return assistant.Draft{Title: cut(title, maxDraftTitleRunes), Content: content, Usage: usage}, nil
}

// draftPrompt builds a draft's messages: the rules, the language, the merchant's instructions and the numbered
// knowledge in the system prompt; the questions and the conversations they were asked in as the user's message.
func draftPrompt(req assistant.DraftRequest) []openai.ChatCompletionMessageParamUnion {
	var sys strings.Builder
	sys.WriteString(draftRules)
	locale := strings.TrimSpace(req.Locale)
	if locale == "" {
		locale = "en"
	}
	fmt.Fprintf(&sys, "\nWrite in the shop's language, %s (BCP 47), whatever the language of the questions.", locale)
	if in := strings.TrimSpace(req.Instructions); in != "" {
		sys.WriteString("\n\nThe shop's instructions to its assistant:\n")
		sys.WriteString(in)
	}
	sys.WriteString("\n\nThe shop's knowledge base:")
	if len(req.Items) == 0 {
		sys.WriteString("\n(none)")
	}
	for i, it := range req.Items {
		fmt.Fprintf(&sys, "\n\n[%d] %s", i+1, it.Title)
		if it.URL != "" {
			fmt.Fprintf(&sys, " (%s)", it.URL)
		}
		sys.WriteString("\n")
		sys.WriteString(cut(it.Content, maxItemRunes))
	}
	var user strings.Builder
	user.WriteString("Visitors asked:")
	for _, q := range req.Questions {
		fmt.Fprintf(&user, "\n- %s", q)
	}
	for i, c := range req.Conversations[:min(len(req.Conversations), maxDraftConversations)] {
		fmt.Fprintf(&user, "\n\nConversation %d:", i+1)
		for _, turn := range c {
			who := "Assistant"
			if turn.Visitor {
				who = "Visitor"
			}
			fmt.Fprintf(&user, "\n%s: %s", who, cut(turn.Text, maxDraftTurnRunes))
		}
	}
	return []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(sys.String()), openai.UserMessage(user.String())}
}

// readDraft splits a model's article into its title, the first line, and its content, the rest. A model that
// wrote one paragraph alone gave no title: the whole is the content. Markdown a model adds to the title
// (a heading's #, bold, quotes, a "Title:" label) is no part of it.
func readDraft(answer string) (title, content string) {
	answer = strings.TrimSpace(answer)
	first, rest, ok := strings.Cut(answer, "\n")
	if !ok {
		return "", answer
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return "", strings.TrimSpace(first)
	}
	markup := func(r rune) bool {
		return r == '#' || r == '*' || r == '"' || r == '“' || r == '”' || unicode.IsSpace(r)
	}
	title = strings.TrimFunc(first, markup)
	if label, after, ok := strings.Cut(title, ":"); ok && strings.EqualFold(strings.TrimFunc(label, markup), "title") {
		title = strings.TrimFunc(after, markup)
	}
	return title, rest
}
