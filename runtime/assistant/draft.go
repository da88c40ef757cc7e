package assistant

import (
	"context"
	"errors"
)

// DraftRequest asks a model to draft a knowledge-base article that answers questions visitors asked and the
// assistant missed (the review queue's), for the merchant to edit and save as an item.
type DraftRequest struct {
	// Questions are the wordings visitors asked, most asked first.
	Questions []string
	// Conversations are the conversations the questions were asked in, each its messages oldest first.
	Conversations [][]Turn
	// Items are the merchant's items nearest to the questions, best first: what the article may draw on.
	Items []Item
	// Locale is the BCP 47 language the article is written in: the merchant's widget's; "" means English.
	Locale string
	// Instructions are the merchant's additions to the assistant's system prompt.
	Instructions string
	// Provider, Model and APIKey are as Request's: the merchant's plan's model, and its own key when it has one.
	Provider, Model, APIKey string
}

// Draft is a model's drafted article.
type Draft struct {
	Title, Content string
	// Usage is what the model provider billed for the draft.
	Usage Usage
}

// Drafter is implemented by a Responder that answers with a model: it drafts articles with the model a request
// names.
type Drafter interface {
	// CanDraft reports whether a model answers the merchant whose plan names provider and model ("" for the
	// runtime's default).
	CanDraft(provider, model string) bool
	// Draft asks the model for an article. Its errors are ErrNoModel, or wrap ErrModelTimedOut or ErrModelFailed,
	// or are ctx's.
	Draft(ctx context.Context, req DraftRequest) (Draft, error)
}

var (
	// ErrNoModel is a draft asked of a merchant that no model answers.
	ErrNoModel = errors.New("no model answers this merchant")
	// ErrModelTimedOut is a model that did not answer within its timeouts.
	ErrModelTimedOut = errors.New("the model did not answer in time")
	// ErrModelFailed is a model that refused the request, failed, or answered nothing usable.
	ErrModelFailed = errors.New("the model failed to answer")
)
