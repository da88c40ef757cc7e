// Package assistant writes the chatbot's answers. The default Responder, Retrieval, needs no network: it ranks
// the merchant's knowledge items with BM25 over stemmed words and answers from the best one.
package assistant

import "context"

// Item is a knowledge base item as the assistant sees it.
type Item struct {
	ID      string
	Title   string
	Content string
	URL     string
	Tags    []string
	// Questions are questions visitors ask that the item answers, as the merchant writes them: a question that
	// asks one of them is answered from the item before anything else (see asked), and their words count for
	// the item as its title's do.
	Questions []string
	// Curated makes Content the answer to Questions: a question that asks one of them, or that the item matches
	// with at least CuratedConfidence, is answered with Content as written, first of all (see CuratedReply).
	Curated bool
	// Vectors are the embeddings of the item's EmbeddingTexts, one per passage, in order, all of one model; nil
	// for words alone. The index keeps them quantised and the item none of them.
	Vectors [][]float32
}

// Source is an item an answer was drawn from, with its relevance score.
type Source struct {
	KnowledgeID string
	Title       string
	URL         string
	// Snippet is the part of the item the answer used, or the sentence of a suggested item nearest to the
	// question.
	Snippet string
	// Score is the item's BM25 relevance to the question; higher is better.
	Score float64
}

// Kind says what sort of reply was given.
type Kind string

// The kinds of reply.
const (
	// KindAnswer is an answer drawn from the knowledge base.
	KindAnswer Kind = "answer"
	// KindGreeting answers a greeting.
	KindGreeting Kind = "greeting"
	// KindThanks answers thanks or a goodbye.
	KindThanks Kind = "thanks"
	// KindFallback says the knowledge base has no answer and offers to take contact details.
	KindFallback Kind = "fallback"
)

// Request is what a Responder answers.
type Request struct {
	// Message is the visitor's message.
	Message string
	// Index holds the merchant's knowledge, ready to search.
	Index *Index
	// FallbackMessage is the merchant's text for questions the knowledge base cannot answer; a default is used
	// when empty.
	FallbackMessage string
	// Instructions are the merchant's additions to the system prompt (used by LLM providers).
	Instructions string
	// Locale is the BCP 47 language of the merchant's widget, for the built-in texts; "" means English.
	Locale string
	// Language is the BCP 47 language the visitor's widget speaks, chosen from the browser's: the built-in texts
	// are in it when they exist in it, and a model answers in it when the message's language is unclear.
	Language string
	// History holds the conversation's earlier turns, oldest first.
	History []Turn
	// Provider and Model name the model that answers, of those the runtime declares, as the merchant's plan
	// chose; empty for the runtime's default. Responders without models ignore them.
	Provider, Model string
	// APIKey is the merchant's own key for the provider, sent instead of the provider's; empty for the
	// provider's. Never logged.
	APIKey string
	// Delta, when set, is given the answer's text in pieces as a model writes it. The pieces may differ from the
	// reply's final text (a model that fails midway is replaced by the offline answer), so a reader takes
	// Reply.Text as the answer once it is returned. Responders that answer at once do not call it.
	Delta func(piece string)
	// QueryVector is the embedding of the message made standalone (StandaloneQuestion), by the model of the
	// index's vectors; nil searches by words alone.
	QueryVector []float32
}

// Turn is one earlier message of the conversation.
type Turn struct {
	// Visitor is true for the visitor's messages, false for the assistant's.
	Visitor bool
	Text    string
}

// Usage counts the model tokens an answer took.
type Usage struct {
	PromptTokens, CompletionTokens int64
}

// Reply is a Responder's answer.
type Reply struct {
	Text string
	// Sources are the items an answer cites; in a reply that has no answer (KindFallback), the items nearest to
	// the question, which the visitor may follow instead.
	Sources []Source
	Kind    Kind
	// Answered is false when the visitor's question could not be answered (KindFallback).
	Answered bool
	// Usage is what a model provider billed for the answer; zero for offline answers.
	Usage Usage
	// Cut is why a model's answer ended before it was done, CutLength or CutContentFilter; "" for a whole
	// answer. A cut answer is not Answered: it is given as far as it goes, but not counted as an answer.
	Cut string
	// Confidence is, for an answer drawn from the knowledge base (KindAnswer), the retriever's confidence, above 0
	// and up to 1, that its best item answers the question; 1 for a curated answer, which the merchant vouches
	// for. It is 0 for the other kinds.
	Confidence float64
}

// The reasons an answer was cut short, as the chat completions API names them in finish_reason.
const (
	// CutLength is an answer that reached its token limit.
	CutLength = "length"
	// CutContentFilter is an answer the provider's content filter ended (Azure OpenAI).
	CutContentFilter = "content_filter"
)

// Responder answers a visitor's message.
type Responder interface {
	Respond(ctx context.Context, req Request) (Reply, error)
}

// InterruptedError is a model's answer its caller cancelled midway (the visitor went away): the request to the
// provider is closed, and Partial holds the text written so far and the tokens the provider bills for it, so that
// the caller stores and counts what was spent. It unwraps to the context's error.
type InterruptedError struct {
	Partial Reply
	Err     error
}

func (e *InterruptedError) Error() string { return "the answer was interrupted: " + e.Err.Error() }

func (e *InterruptedError) Unwrap() error { return e.Err }

// HistoryLimiter is implemented by a Responder that hears fewer of a conversation's earlier turns than a caller
// would hand it: HistoryFor is how many of the latest messages it needs to answer message (0: none), so that the
// caller reads no more.
type HistoryLimiter interface {
	HistoryFor(message string) int
}
