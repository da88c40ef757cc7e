package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	// draftItems is how many of the merchant's items nearest to a group's questions a draft's prompt carries.
	draftItems = 5
	// draftTurns is how many of each conversation's latest messages a draft's prompt quotes.
	draftTurns = 10
)

// ErrTokensUsedUp refuses a draft once the merchant's answers and drafts took the plan's monthly model tokens.
var ErrTokensUsedUp = errors.New("the merchant's plan's model tokens for this month are used up")

// DraftedAnswer is an article a model drafted for a group of the review queue, which the merchant edits and saves
// as an item (CreateKnowledge): nothing of it is stored until then.
type DraftedAnswer struct {
	Title, Content string
	// Questions are the group's questions, to list under the item: the wording shown first, then the others.
	Questions []string
	// Sources are the items the model was given.
	Sources []store.Source
}

// CanDraft reports whether a model answers the merchant, which can then draft answers for its review queue.
func (s *Service) CanDraft(m *tenant.Bundle) bool {
	d, ok := s.responder.(assistant.Drafter)
	return ok && d.CanDraft(m.Assistant.Provider, m.Assistant.Model)
}

// DraftAnswer asks the merchant's model for an article answering the review group that holds one of questions
// (ReviewGroup.Questions, as RecordFix names a group; ErrInvalidFix when they cannot name one), from the merchant's items nearest to them and the
// conversations they were asked in, in the merchant's language. The model's tokens count against the plan's
// monthly tokens, refused once used up (ErrTokensUsedUp). A group no longer in the merchant's queue (dealt with,
// or another merchant's) is store.ErrNotFound; a merchant no model answers, assistant.ErrNoModel; a model that
// fails, an error wrapping assistant.ErrModelTimedOut or assistant.ErrModelFailed.
func (s *Service) DraftAnswer(ctx context.Context, m *tenant.Bundle, questions []string) (DraftedAnswer, error) {
	if err := checkGroupQuestions(questions); err != nil {
		return DraftedAnswer{}, err
	}
	drafter, ok := s.responder.(assistant.Drafter)
	if !ok || !drafter.CanDraft(m.Assistant.Provider, m.Assistant.Model) {
		return DraftedAnswer{}, assistant.ErrNoModel
	}
	_, metered, err := s.responderFor(ctx, m)
	if err != nil {
		return DraftedAnswer{}, err
	}
	if !metered {
		return DraftedAnswer{}, ErrTokensUsedUp
	}
	groups, err := s.Review(ctx, m)
	if err != nil {
		return DraftedAnswer{}, err
	}
	i := slices.IndexFunc(groups, func(g ReviewGroup) bool {
		return slices.ContainsFunc(g.Questions, func(q store.QuestionCount) bool { return slices.Contains(questions, q.Question) })
	})
	if i < 0 {
		return DraftedAnswer{}, fmt.Errorf("drafting an answer: no review group asks those questions: %w", store.ErrNotFound)
	}
	g := groups[i]
	asked := groupWordings(g)
	req := assistant.DraftRequest{Questions: asked, Locale: m.Widget.Locale, Instructions: m.Assistant.Instructions,
		Provider: m.Assistant.Provider, Model: m.Assistant.Model, APIKey: m.Assistant.APIKey}
	for _, id := range g.Conversations {
		_, latest, err := s.store.ConversationTail(ctx, m.MerchantID, id, draftTurns)
		if errors.Is(err, store.ErrNotFound) {
			continue // erased since
		}
		if err != nil {
			return DraftedAnswer{}, fmt.Errorf("reading conversation %s: %w", id, err)
		}
		req.Conversations = append(req.Conversations, turns(latest))
	}
	index, err := s.index(ctx, m)
	if err != nil {
		return DraftedAnswer{}, err
	}
	var sources []store.Source
	for _, h := range index.Search(strings.Join(asked, "\n"), draftItems) {
		req.Items = append(req.Items, h.Item)
		sources = append(sources, store.Source{KnowledgeID: h.Item.ID, Title: h.Item.Title, URL: h.Item.URL, Score: h.Score})
	}
	d, err := drafter.Draft(ctx, req)
	if n := d.Usage.PromptTokens + d.Usage.CompletionTokens; n > 0 {
		at, ctx := s.now().UTC(), context.WithoutCancel(ctx)
		if err := s.store.Write(ctx, func(tx store.Tx) error { return tx.AddMonthlyTokens(ctx, m.MerchantID, at, n) }); err != nil {
			return DraftedAnswer{}, fmt.Errorf("counting the draft's tokens: %w", err)
		}
	}
	if err != nil {
		return DraftedAnswer{}, err
	}
	return DraftedAnswer{Title: d.Title, Content: d.Content, Questions: asked, Sources: sources}, nil
}

// groupWordings are the questions of g to list under an item: the wording shown, then the group's other
// normalized questions, each once whatever its case, as many as an item lists.
func groupWordings(g ReviewGroup) []string {
	out := []string{g.Question}
	for _, q := range g.Questions {
		if len(out) == MaxQuestions {
			break
		}
		if !slices.ContainsFunc(out, func(o string) bool {
			return strings.EqualFold(strings.Trim(o, "?!. "), strings.Trim(q.Question, "?!. "))
		}) {
			out = append(out, q.Question)
		}
	}
	return out
}
