// Package store defines where the runtime keeps conversations, knowledge, analytics and counters. Two
// implementations pass one conformance suite (storetest): SQLite (sqlite), embedded, and PostgreSQL, shared by
// replicas. Every method is scoped to one merchant: no call can read or write another merchant's data.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors a Store returns; callers map them to HTTP answers.
var (
	// ErrNotFound means the object does not exist for this merchant (it may exist for another one).
	ErrNotFound = errors.New("not found")
	// ErrQuotaExceeded means a new conversation would pass the merchant's monthly ceiling; nothing was written.
	ErrQuotaExceeded = errors.New("monthly conversation quota exceeded")
	// ErrKnowledgeLimit means a new knowledge item would pass the plan's ceiling; nothing was written.
	ErrKnowledgeLimit = errors.New("knowledge item limit reached")
	// ErrInvalidCursor means a pagination cursor was not issued by this store for this listing.
	ErrInvalidCursor = errors.New("invalid cursor")
)

// Store is the runtime's persistence. Times are stored with millisecond precision in UTC.
type Store interface {
	// RecordExchange stores a visitor's message and the assistant's reply in one transaction. When the
	// conversation does not exist for the merchant it is created first and counted against the month of
	// ex.Question.CreatedAt (UTC); with ex.MonthlyLimit > 0 and the month's count already at the limit, nothing is
	// written and ErrQuotaExceeded is returned. Existing conversations always go on. The two messages' IDs are
	// given by the caller. Each knowledge item in the reply's sources has its use count incremented.
	RecordExchange(ctx context.Context, ex Exchange) (ExchangeResult, error)

	// ConversationsThisMonth returns how many conversations the merchant started in the UTC month of now.
	ConversationsThisMonth(ctx context.Context, merchantID string, now time.Time) (int, error)

	// ConversationExists reports whether the merchant has a conversation with this ID.
	ConversationExists(ctx context.Context, merchantID, id string) (bool, error)

	// GetConversation returns a conversation and all its messages, oldest first, or ErrNotFound.
	GetConversation(ctx context.Context, merchantID, id string) (Conversation, []Message, error)

	// ListConversations returns the merchant's conversations, newest first (by creation time, then ID), and a
	// cursor for the next page ("" when there is none).
	ListConversations(ctx context.Context, merchantID string, f ConversationFilter) ([]Conversation, string, error)

	// CreateKnowledge stores a new item. With maxItems > 0 and the merchant already holding maxItems items,
	// nothing is written and ErrKnowledgeLimit is returned (exact under concurrency).
	CreateKnowledge(ctx context.Context, k Knowledge, maxItems int) error

	// GetKnowledge returns one item or ErrNotFound.
	GetKnowledge(ctx context.Context, merchantID, id string) (Knowledge, error)

	// UpdateKnowledge replaces an item's title, content, URL, tags and UpdatedAt, or returns ErrNotFound.
	UpdateKnowledge(ctx context.Context, k Knowledge) error

	// DeleteKnowledge removes an item, or returns ErrNotFound.
	DeleteKnowledge(ctx context.Context, merchantID, id string) error

	// ListKnowledge returns the merchant's items, newest first (by creation time, then ID), and a cursor for the
	// next page ("" when there is none).
	ListKnowledge(ctx context.Context, merchantID string, f KnowledgeFilter) ([]Knowledge, string, error)

	// AllKnowledge returns every item of the merchant, for building the retrieval index.
	AllKnowledge(ctx context.Context, merchantID string) ([]Knowledge, error)

	// KnowledgeRevision returns a number that changes whenever the merchant's knowledge changes, so that
	// replicas can tell when their index is stale. It is 0 for a merchant that never had knowledge.
	KnowledgeRevision(ctx context.Context, merchantID string) (int64, error)

	// Overview computes the merchant's analytics for conversations created in [from, to).
	Overview(ctx context.Context, merchantID string, from, to time.Time) (Overview, error)

	// Ping checks that the store answers.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// Exchange is one visitor message and the reply to it.
type Exchange struct {
	MerchantID     string
	ConversationID string
	// VisitorID identifies the visitor across conversations for the visitors count; may be empty.
	VisitorID string
	// MonthlyLimit is the plan's monthly conversation ceiling; 0 means none.
	MonthlyLimit int
	Question     Message
	Answer       Message
}

// ExchangeResult says what RecordExchange did.
type ExchangeResult struct {
	// Created is true when the exchange started a new conversation.
	Created bool
}

// Role says who wrote a message.
type Role string

// The roles of a message.
const (
	RoleVisitor   Role = "visitor"
	RoleAssistant Role = "assistant"
)

// Message is one message of a conversation.
type Message struct {
	ID        string
	Role      Role
	Text      string
	CreatedAt time.Time
	// Sources are the knowledge items an assistant message was drawn from.
	Sources []Source
	// Answered is false for an assistant message that could not answer from the knowledge base.
	Answered bool
}

// Source is a knowledge item an answer cites.
type Source struct {
	KnowledgeID string
	Title       string
	URL         string
	Snippet     string
	Score       float64
}

// Conversation is a conversation's summary.
type Conversation struct {
	ID           string
	MerchantID   string
	VisitorID    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	MessageCount int
	// FirstMessage is the visitor's first message.
	FirstMessage string
	// Unanswered counts the assistant messages that could not answer.
	Unanswered int
	// HasLead is true once a lead was captured in the conversation.
	HasLead bool
}

// ConversationFilter selects conversations. Zero values select everything.
type ConversationFilter struct {
	// From and To bound the creation time: From <= created < To. Zero means unbounded.
	From, To time.Time
	// Query matches conversations with a message containing it (case-insensitive).
	Query string
	// HasLead, when set, keeps only conversations with (true) or without (false) a lead.
	HasLead *bool
	// Limit is the page size, 1 to 100; 0 means 20.
	Limit int
	// Cursor continues a previous listing.
	Cursor string
}

// Knowledge is a knowledge base item.
type Knowledge struct {
	ID         string
	MerchantID string
	Title      string
	Content    string
	URL        string
	Tags       []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// UseCount is how many answers cited the item.
	UseCount int
}

// KnowledgeFilter selects knowledge items. Zero values select everything.
type KnowledgeFilter struct {
	// Query matches items whose title or content contains it (case-insensitive).
	Query string
	// Tag keeps only items with this tag.
	Tag string
	// Limit is the page size, 1 to 100; 0 means 20.
	Limit int
	// Cursor continues a previous listing.
	Cursor string
}

// Overview is a merchant's analytics over a time range.
type Overview struct {
	Conversations int
	Messages      int
	// Visitors counts distinct visitor IDs; conversations without one count as one visitor each.
	Visitors int
	// AnsweredMessages and UnansweredMessages count assistant messages.
	AnsweredMessages   int
	UnansweredMessages int
	Leads              int
	// TopQuestions are the most asked visitor questions (normalised: lower case, punctuation and extra spaces
	// removed), most first, at most 10.
	TopQuestions []QuestionCount
	// UnansweredQuestions are the most asked questions the assistant could not answer, most first, at most 10.
	UnansweredQuestions []QuestionCount
	// Daily has one entry per UTC day in the range that has conversations, oldest first.
	Daily []DayCount
}

// QuestionCount is a normalised question and how often it was asked.
type QuestionCount struct {
	Question string
	Count    int
}

// DayCount is one UTC day's activity.
type DayCount struct {
	Date          string // YYYY-MM-DD
	Conversations int
	Messages      int
}
