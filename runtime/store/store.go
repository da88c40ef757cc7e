// Package store defines where the runtime keeps conversations, knowledge, analytics and counters. Two
// implementations pass one conformance suite (storetest): SQLite (sqlite), embedded, and PostgreSQL, shared by
// replicas. Every method is scoped to one merchant: no call can read or write another merchant's data.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors a Store returns; callers map them to HTTP answers.
var (
	// ErrNotFound means the object does not exist for this merchant (it may exist for another one).
	ErrNotFound = errors.New("not found")
	// ErrQuotaExceeded means a new conversation would pass the merchant's monthly ceiling; nothing was written.
	ErrQuotaExceeded = errors.New("monthly conversation quota exceeded")
	// ErrConversationFull means an exchange would take a conversation past MaxConversationMessages; nothing
	// was written.
	ErrConversationFull = fmt.Errorf("the conversation has reached its %d messages", MaxConversationMessages)
	// ErrKnowledgeLimit means a new knowledge item would pass the plan's ceiling; nothing was written.
	ErrKnowledgeLimit = errors.New("knowledge item limit reached")
	// ErrKnowledgeSizeLimit means a knowledge write would pass the plan's ceiling of characters; nothing was
	// written.
	ErrKnowledgeSizeLimit = errors.New("knowledge size limit reached")
	// ErrInvalidCursor means a pagination cursor was not issued by this store for this listing.
	ErrInvalidCursor = errors.New("invalid cursor")
	// ErrNotReplayable means a delivery is still pending and cannot be replayed yet.
	ErrNotReplayable = errors.New("delivery is still pending")
	// ErrStatusChanged means a conversation's status was no longer the one a status change was made from;
	// nothing was written.
	ErrStatusChanged = errors.New("the conversation's status has changed")
)

// MaxConversationMessages is the most messages a conversation holds, questions and answers. The runtime refuses
// a turn past it when it reads the conversation; the database refuses the exchanges of turns that arrived
// together, which each read the conversation with room left, and that would take it past (the schema of both
// stores names the number: migration 9).
const MaxConversationMessages = 1000

// Store is the runtime's persistence: reads, and a transaction runner for writes. The multi-step rules that
// writes follow (what an exchange, a lead or a knowledge write changes, and which events it produces) live once,
// in package chat, over the statements of Tx; a Store provides only its dialect's statements. Times are stored
// with millisecond precision in UTC.
type Store interface {
	Reader

	// Write runs fn in one transaction and commits it when fn returns nil; any error rolls everything back.
	// fn may be run more than once (the SQLite store re-runs a callback whose group commit failed, and a
	// PostgreSQL serialisation failure may be retried), so it must not keep state across runs: set its results
	// afresh on every run.
	Write(ctx context.Context, fn func(Tx) error) error

	// WriteExchange is Write for the chat path's exchanges (chat.RecordExchange): the commonest write by far, and a
	// short one. A store may run the exchanges that arrive together in one transaction (group commit), running each
	// again alone should any of them fail. Every other write, which may be long (an import of a thousand items, a
	// merchant's erasure), goes through Write, so that it never holds exchanges up.
	WriteExchange(ctx context.Context, fn func(Tx) error) error

	// ClaimDeliveries leases up to limit pending deliveries of any merchant that are due at now and not leased by
	// another caller, until now+lease, and returns them oldest due first. A caller that dies holding a lease
	// leaves its deliveries to whoever claims them once the lease ends. No merchant holds more than perMerchant
	// leases at once (those of earlier claims included), so that one merchant's backlog or slow endpoint leaves
	// room for the others' deliveries.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]Delivery, error)

	// ClaimSources leases up to limit knowledge sources of any merchant whose sync is due at now and not leased
	// by another caller, until now+lease, marks them syncing and returns them, oldest due first. No merchant holds
	// more than perMerchant leases at once (those of earlier claims included), so that one merchant's crawls
	// leave room for the others'. Across replicas sharing the store, each due sync is claimed once.
	ClaimSources(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]KnowledgeSource, error)

	// Ping checks that the store answers.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// Reader reads a merchant's data. Every method is scoped to one merchant.
type Reader interface {
	SourceReader

	// ConversationsThisMonth returns how many conversations the merchant started in the UTC month of now.
	ConversationsThisMonth(ctx context.Context, merchantID string, now time.Time) (int, error)

	// TokensThisMonth returns the model tokens the merchant's answers took in the UTC month of now.
	TokensThisMonth(ctx context.Context, merchantID string, now time.Time) (int64, error)

	// VisitorUse returns the answers and model tokens of the conversations the merchant's visitor (a non-empty
	// visitor ID) started at or after since.
	VisitorUse(ctx context.Context, merchantID, visitorID string, since time.Time) (Use, error)

	// ConversationExists reports whether the merchant has a conversation with this ID.
	ConversationExists(ctx context.Context, merchantID, id string) (bool, error)

	// ConversationVisitor returns the visitor ID the conversation was started with ("" when none), or
	// ErrNotFound.
	ConversationVisitor(ctx context.Context, merchantID, id string) (string, error)

	// GetConversation returns a conversation and all its messages, oldest first, or ErrNotFound.
	GetConversation(ctx context.Context, merchantID, id string) (Conversation, []Message, error)

	// ConversationTail returns a conversation and its latest n messages (none when n is 0) as the assistant hears
	// them, oldest first, or ErrNotFound: what a chat turn reads, through an index that reaches only those
	// messages however long the conversation is.
	ConversationTail(ctx context.Context, merchantID, id string, n int) (Conversation, []Turn, error)

	// ListConversations returns the merchant's conversations, newest first (by creation time, then ID), and a
	// cursor for the next page ("" when there is none).
	ListConversations(ctx context.Context, merchantID string, f ConversationFilter) ([]Conversation, string, error)

	// EachConversation calls fn with each of the merchant's conversations that f keeps (its Limit and Cursor
	// aside) and all its messages, oldest first, newest conversation first, until fn returns an error, which it
	// returns. Like EachLead it reads a page at a time (a page of conversations, then their messages in one
	// query, bounded to a few thousand messages) and calls fn between reads, so that an export holds one page
	// whatever the count and no connection or snapshot is held while fn writes to a slow client.
	EachConversation(ctx context.Context, merchantID string, f ConversationFilter, fn func(Conversation, []Message) error) error

	// GetKnowledge returns one item or ErrNotFound.
	GetKnowledge(ctx context.Context, merchantID, id string) (Knowledge, error)

	// ListKnowledge returns the merchant's items, newest first (by creation time, then ID), and a cursor for the
	// next page ("" when there is none).
	ListKnowledge(ctx context.Context, merchantID string, f KnowledgeFilter) ([]Knowledge, string, error)

	// AllKnowledge returns every item of the merchant, for building the retrieval index.
	AllKnowledge(ctx context.Context, merchantID string) ([]Knowledge, error)

	// KnowledgeVectors returns the stored embeddings of the merchant's items' passages, of every model, by item
	// and passage.
	KnowledgeVectors(ctx context.Context, merchantID string) ([]KnowledgeVector, error)

	// KnowledgeVectorStamps returns the same as KnowledgeVectors without the vectors (Vector nil): what each
	// stored embedding is of, for telling which items need embedding without reading every vector.
	KnowledgeVectorStamps(ctx context.Context, merchantID string) ([]KnowledgeVector, error)

	// KnowledgeRevision returns a number that changes whenever the merchant's knowledge changes, so that
	// replicas can tell when their index is stale. It is 0 for a merchant that never had knowledge.
	KnowledgeRevision(ctx context.Context, merchantID string) (int64, error)

	// Overview computes the merchant's analytics for conversations created in [from, to).
	Overview(ctx context.Context, merchantID string, from, to time.Time) (Overview, error)

	// ListLeads returns the merchant's leads, newest first (by creation time, then ID), and a cursor for the next
	// page ("" when there is none).
	ListLeads(ctx context.Context, merchantID string, f LeadFilter) ([]Lead, string, error)

	// EachLead calls fn with each of the merchant's leads that f keeps (its Limit and Cursor aside), newest first,
	// until fn returns an error, which it returns. It reads a page of leads at a time and calls fn between reads,
	// so that an export holds one page whatever the count, and no connection or snapshot is held while fn writes
	// to a slow client. A lead created while it runs is left out.
	EachLead(ctx context.Context, merchantID string, f LeadFilter, fn func(Lead) error) error

	// SubjectRecords returns what the merchant holds about one data subject (a visitor, or a person known by an
	// e-mail address or phone number): the leads that name the subject's visitor ID, e-mail address (ignoring
	// case) or phone number (its digits); the visitors of those leads; and every conversation and lead of those
	// visitors or of those leads' conversations. Conversations come oldest first, leads oldest first.
	SubjectRecords(ctx context.Context, merchantID string, s Subject) (SubjectData, error)

	// ListDeliveries returns the merchant's deliveries, newest first (by creation time, then ID), and a cursor for
	// the next page ("" when there is none).
	ListDeliveries(ctx context.Context, merchantID string, f DeliveryFilter) ([]Delivery, string, error)

	// GetDelivery returns one delivery with its attempts, oldest first, or ErrNotFound.
	GetDelivery(ctx context.Context, merchantID, id string) (Delivery, []Attempt, error)
	// ListAPIKeys returns the merchant's self-service API keys, revoked ones included, newest first.
	ListAPIKeys(ctx context.Context, merchantID string) ([]APIKey, error)
	// APIKeyByHash returns the self-service key whose SHA-256 is sha256Hex, of any merchant, revoked or not (its
	// RevokedAt says), or ErrNotFound. A revoked key's hash stays its merchant's.
	APIKeyByHash(ctx context.Context, sha256Hex string) (APIKey, error)
	// APIKeysByHash returns the self-service keys, revoked ones included, whose SHA-256 is one of hashes, of any
	// merchant, in no order: one query for many hashes.
	APIKeysByHash(ctx context.Context, hashes []string) ([]APIKey, error)

	// StreamEvents returns the merchant's live-stream events that f selects, oldest first.
	StreamEvents(ctx context.Context, merchantID string, f StreamFilter) ([]StreamEvent, error)

	// StreamHead returns the number of the merchant's latest live-stream event; 0 when it has none.
	StreamHead(ctx context.Context, merchantID string) (int64, error)

	// TeamSeenAt returns when the merchant's team last had its inbox open (TouchTeamPresence), or the zero time.
	TeamSeenAt(ctx context.Context, merchantID string) (time.Time, error)
	// VisitorAnswer returns the conversation of the assistant message messageID in one of the conversations the
	// merchant's visitor (a non-empty visitor ID) started, or ErrNotFound: another visitor's message, a visitor's
	// own question and a message that does not exist are all not found.
	VisitorAnswer(ctx context.Context, merchantID, visitorID, messageID string) (conversationID string, err error)

	// ConversationRatings returns the ratings of a conversation's answers, oldest first, and its own rating (nil
	// when it has none).
	ConversationRatings(ctx context.Context, merchantID, conversationID string) ([]Rating, *Satisfaction, error)

	// VisitorRatings returns every rating the merchant's visitor gave, of answers and of conversations, oldest
	// first: what a subject's export holds of them.
	VisitorRatings(ctx context.Context, merchantID, visitorID string) ([]Rating, []Satisfaction, error)

	// ReviewMisses returns the answers of the merchant's conversations created at or after since that missed:
	// those the assistant could not give, those the visitor rated down, and those given with a measured confidence
	// (Message.Confidence above 0) below lowConfidence, newest first, at most limit, each with the question it
	// answered.
	ReviewMisses(ctx context.Context, merchantID string, since time.Time, lowConfidence float64, limit int) ([]Miss, error)

	// ReviewFixes returns when each question of the merchant's review queue was last dealt with.
	ReviewFixes(ctx context.Context, merchantID string) ([]ReviewFix, error)

	// FeedbackWeeks returns, for each UTC week (from Monday) with answers or ratings in [from, to), the answers
	// given and not, the answers rated and rated down, and the conversations rated and rated satisfied, oldest
	// first: whether the answers get better. from is a Monday, 00:00 UTC.
	FeedbackWeeks(ctx context.Context, merchantID string, from, to time.Time) ([]FeedbackWeek, error)

	// FixResults returns, for each of the merchant's review fixes, how often its question was asked after the fix
	// and answered: what the fix did.
	FixResults(ctx context.Context, merchantID string) ([]FixResult, error)

	// SignedOutAt returns when the dashboard user of the identity provider's subject last signed out, or the
	// zero time. A user is no merchant's: they may own several.
	SignedOutAt(ctx context.Context, subject string) (time.Time, error)

	// MerchantUIDs returns the UID of the Merchant whose data each merchant ID holds, for every merchant ID that
	// has one recorded.
	MerchantUIDs(ctx context.Context) (map[string]string, error)
}

// Tx is one write transaction's statements. Each is a single step; the rules that combine them are package
// chat's. Every statement is scoped to the merchant it names.
type Tx interface {
	SourceTx

	// UpsertConversation creates the exchange's conversation with the exchange's two messages counted, or counts
	// them in the existing one, and reports whether it created it. Two first exchanges of one conversation
	// racing on replicas see exactly one creation.
	UpsertConversation(ctx context.Context, ex Exchange) (created bool, err error)

	// ClaimMonthlySlot adds one to the merchant's conversations of the UTC month of at, or returns
	// ErrQuotaExceeded, changing nothing, when the count already is at limit (0: no ceiling). Exact under
	// concurrency, across replicas. A store that sends statements together may return ErrQuotaExceeded from a
	// later step or from the commit instead, as the transaction's error.
	ClaimMonthlySlot(ctx context.Context, merchantID string, at time.Time, limit int) error

	// InsertMessages inserts the exchange's question and answer, the answer with the exchange's model tokens.
	InsertMessages(ctx context.Context, ex Exchange) error

	// AddMonthlyTokens adds n model tokens to the merchant's total of the UTC month of at.
	AddMonthlyTokens(ctx context.Context, merchantID string, at time.Time, n int64) error

	// CountCitations adds one to the use count of each of the knowledge items.
	CountCitations(ctx context.Context, merchantID string, knowledgeIDs []string) error

	// FindLead returns the lead of a visitor in a conversation, or ErrNotFound.
	FindLead(ctx context.Context, merchantID, conversationID, visitorID string) (Lead, error)

	// InsertLead stores a new lead.
	InsertLead(ctx context.Context, l Lead) error

	// UpdateLead replaces a lead's contact details and UpdatedAt.
	UpdateLead(ctx context.Context, l Lead) error

	// MarkHasLead records that a conversation has a lead.
	MarkHasLead(ctx context.Context, merchantID, conversationID string) error

	// ClaimKnowledgeSlot counts one more knowledge item for the merchant, changes its knowledge revision and
	// reports true, or reports false, changing nothing, when it holds maxItems items already (0: no ceiling).
	// Exact under concurrency, across replicas.
	ClaimKnowledgeSlot(ctx context.Context, merchantID string, maxItems int) (bool, error)

	// TouchKnowledge changes the merchant's knowledge revision and adds delta to its item count; it comes first
	// in every update and deletion so that one merchant's knowledge writes are serialised. A merchant that never
	// had knowledge is ErrNotFound.
	TouchKnowledge(ctx context.Context, merchantID string, delta int) error

	// KnowledgeCharacters returns how many characters the titles, contents and questions of the merchant's knowledge
	// items hold, without the item except (none when empty). After ClaimKnowledgeSlot or TouchKnowledge, which
	// serialise the merchant's knowledge writes, it counts every other write committed, so a ceiling checked on it
	// holds under concurrency, across replicas.
	KnowledgeCharacters(ctx context.Context, merchantID, except string) (int, error)

	// InsertKnowledge stores a new item.
	InsertKnowledge(ctx context.Context, k Knowledge) error

	// DeleteFileKnowledge deletes the items made of the uploaded file by that name (Knowledge.File) and returns
	// how many it deleted.
	DeleteFileKnowledge(ctx context.Context, merchantID, file string) (int, error)

	// UpdateKnowledge replaces an item's title, content, URL, tags, questions, draft and curated status and
	// UpdatedAt, or returns ErrNotFound.
	UpdateKnowledge(ctx context.Context, k Knowledge) error

	// DeleteKnowledge removes an item, or returns ErrNotFound.
	DeleteKnowledge(ctx context.Context, merchantID, id string) error

	// ReplaceKnowledgeVectors replaces the embeddings of an item's passages with vs (each of the item), or
	// returns ErrNotFound, changing nothing, when the item is gone. An item's vectors go with it when it is
	// deleted.
	ReplaceKnowledgeVectors(ctx context.Context, merchantID, knowledgeID string, vs []KnowledgeVector) error

	// ConversationForUpdate returns a conversation, kept from other writers' changes until the transaction ends,
	// or ErrNotFound: what a status change reads first.
	ConversationForUpdate(ctx context.Context, merchantID, id string) (Conversation, error)

	// SetConversationStatus moves the conversation to status at at. The first move to StatusWaiting records at
	// as its HandoffAt. A conversation that does not exist is ErrNotFound.
	SetConversationStatus(ctx context.Context, merchantID, id string, status Status, at time.Time) error

	// AppendMessage adds one message, a visitor's or a team member's, to an existing conversation and counts it;
	// a team member's first message records its time as the conversation's AgentReplyAt. A conversation that does
	// not exist is ErrNotFound, one that would pass MaxConversationMessages ErrConversationFull.
	AppendMessage(ctx context.Context, merchantID, conversationID string, m Message) error

	// AppendStreamEvent adds an event to the merchant's live-stream log and returns its number: one more than
	// the merchant's last, numbered in the order the transactions that wrote them commit, so that a reader that
	// has seen number n never misses a lower one committed later.
	AppendStreamEvent(ctx context.Context, merchantID string, e StreamEvent) (int64, error)

	// TouchTeamPresence records that the merchant's team had its inbox open at at.
	TouchTeamPresence(ctx context.Context, merchantID string, at time.Time) error
	// SaveRating stores a visitor's rating of an answer, replacing the rating and comment of an earlier one (whose
	// CreatedAt stays), and returns the stored rating's CreatedAt, or reports that nothing changed: rating an answer
	// again as it is rated changes nothing.
	SaveRating(ctx context.Context, r Rating) (created time.Time, changed bool, err error)

	// SaveSatisfaction stores a visitor's rating of a conversation, replacing the score and comment of an earlier
	// one (whose CreatedAt stays), and returns the stored rating's CreatedAt, or reports that nothing changed.
	SaveSatisfaction(ctx context.Context, s Satisfaction) (created time.Time, changed bool, err error)

	// SaveReviewFix records that the merchant dealt with a question of its review queue, replacing an earlier
	// record of it.
	SaveReviewFix(ctx context.Context, f ReviewFix) error

	// InsertEvent writes an event to the outbox.
	InsertEvent(ctx context.Context, merchantID string, e Event) error

	// InsertDelivery writes the delivery of an event to one of its endpoints, due at once; a delivery to an
	// endpoint disabled at its URL is written as cancelled, with EndpointDisabled as its last error, so that the
	// log shows it.
	InsertDelivery(ctx context.Context, merchantID string, e Event, ep Endpoint) error

	// GetDelivery returns one delivery, or ErrNotFound.
	GetDelivery(ctx context.Context, merchantID, id string) (Delivery, error)

	// RecordAttempt counts and logs the attempt, moves its delivery to the attempt's status and due time and
	// ends its lease. It returns the delivery's endpoint, or ErrNotFound.
	RecordAttempt(ctx context.Context, a Attempt) (webhookID string, err error)

	// CancelDelivery ends a delivery that was never sent, with reason as its last error and no lease.
	CancelDelivery(ctx context.Context, merchantID, id, reason string, at time.Time) error

	// CancelPending cancels, with reason, every pending delivery to the webhook except the one named.
	CancelPending(ctx context.Context, merchantID, webhookID, except, reason string, at time.Time) error

	// DisableEndpoint marks an endpoint as gone at url: deliveries written for it later are cancelled.
	DisableEndpoint(ctx context.Context, merchantID, webhookID, url string, at time.Time) error

	// ReopenDelivery makes a delivery pending again, due at now, with no lease and no last error, and enables
	// its endpoint again.
	ReopenDelivery(ctx context.Context, d Delivery, now time.Time) error
	// InsertAPIKey stores a new self-service API key.
	InsertAPIKey(ctx context.Context, k APIKey) error
	// RevokeAPIKey revokes the merchant's unrevoked key id at at, or returns ErrNotFound.
	RevokeAPIKey(ctx context.Context, merchantID, id string, at time.Time) error
	// TouchAPIKey records that the merchant's key id was used at at.
	TouchAPIKey(ctx context.Context, merchantID, id string, at time.Time) error
	// RecordSignOut records that the dashboard user of subject signed out at at, unless a later sign-out is
	// recorded already.
	RecordSignOut(ctx context.Context, subject string, at time.Time) error
	// RedeemSignIn records that the dashboard sign-in whose state hashes to stateSHA256 was redeemed, kept until
	// expires (the sign-in's own expiry), and reports false when it was redeemed already; records past their
	// expiry at now are forgotten.
	RedeemSignIn(ctx context.Context, stateSHA256 string, expires, now time.Time) (bool, error)

	// EraseMerchant deletes every row the merchant has, in every table: conversations and messages, monthly
	// counters, knowledge and its sources with their pages, leads, events, deliveries and their attempts,
	// disabled endpoints and self-service keys. It returns how many rows it deleted; erasing a merchant without
	// data deletes none.
	EraseMerchant(ctx context.Context, merchantID string) (rows int64, err error)

	// MerchantUID returns the UID of the Merchant whose data the merchant ID holds, "" when none is recorded,
	// and holds it for the rest of the transaction: another transaction reading it waits for this one to end.
	MerchantUID(ctx context.Context, merchantID string) (string, error)

	// SetMerchantUID records that the merchant ID's data is the Merchant uid's, since at.
	SetMerchantUID(ctx context.Context, merchantID, uid string, at time.Time) error

	// DeleteConversation deletes one of the merchant's conversations and everything that belongs to it, in every
	// table that holds some: its messages (with their citations), its leads, and the outbox events of both with
	// their deliveries (the payloads) and attempts. Counters keep their counts. It returns how many rows it
	// deleted, or ErrNotFound.
	DeleteConversation(ctx context.Context, merchantID, id string) (rows int64, err error)

	// ClaimLease takes or renews the merchant's lease name for holder until now+ttl and reports true, or reports
	// false, changing nothing, while another holder's lease has not ended at now: across replicas, one holder at a
	// time. A lease of the runtime's own, not of one merchant, has merchantID "". A lease ends, and is released,
	// by its holder's claim with ttl 0: its row stays, as the sweep's must (its end schedules the next sweep),
	// and a merchant's go with the rest of its data in EraseMerchant. A release changes only its holder's row and
	// reports whether there was one: it never writes a lease back for a merchant erased while its holder worked.
	ClaimLease(ctx context.Context, merchantID, name, holder string, now time.Time, ttl time.Duration) (bool, error)

	// DeleteExpired deletes up to limit of the merchant's records of the kind last changed before before (a
	// conversation by its last message, a lead by its last change, an outbox event by its creation), oldest first,
	// with what belongs to them in every table of the store's personal data map (a conversation's messages and
	// their citations; an event's deliveries, payloads and attempts; a conversation's leads stay, with their own
	// retention). It returns how many records and how many rows it deleted: fewer records than limit means none
	// are left.
	DeleteExpired(ctx context.Context, merchantID string, kind Expiring, before time.Time, limit int) (records int, rows int64, err error)

	// DeleteLead deletes one of the merchant's leads and its outbox events with their deliveries and attempts,
	// and clears its conversation's HasLead when no other lead is left there. The conversation and its messages
	// stay. It returns how many rows it deleted, or ErrNotFound.
	DeleteLead(ctx context.Context, merchantID, id string) (rows int64, err error)
}

// Expiring names a kind of record a retention deletes (Tx.DeleteExpired).
type Expiring string

// The kinds of record a retention deletes.
const (
	ExpiringConversations Expiring = "conversations"
	ExpiringLeads         Expiring = "leads"
	// ExpiringDeliveries are the outbox's events with their deliveries (the webhook payloads) and attempts.
	ExpiringDeliveries Expiring = "webhook_deliveries"
)

// ExpiringKinds lists the kinds, in the order a sweep deletes them.
var ExpiringKinds = []Expiring{ExpiringDeliveries, ExpiringConversations, ExpiringLeads}

// Subject identifies a data subject by any of a visitor ID, an e-mail address and a phone number; empty fields
// identify nothing, and a Subject with none identifies nobody.
type Subject struct {
	VisitorID string
	Email     string
	// Phone is compared by its digits: "+49 30 1234567" and "4930-1234567" are one number.
	Phone string
}

// SubjectData is what a store holds about a data subject (Reader.SubjectRecords).
type SubjectData struct {
	// Conversations are the subject's conversations, without their messages.
	Conversations []Conversation
	// Leads are the subject's leads, those of its conversations included.
	Leads []Lead
}

// APIKey is a self-service API key, created by a merchant's owner in the dashboard and known only by its
// SHA-256, like the keys declared as APIKey resources.
type APIKey struct {
	MerchantID string
	// ID is the key's public identifier, the part after its type prefix ("pk_<id>_...").
	ID string
	// Type is "publishable" or "secret".
	Type string
	// SHA256 is the lowercase hex SHA-256 of the whole key.
	SHA256    string
	CreatedAt time.Time
	// LastUsedAt is when the key was last used (to the minute); zero when never.
	LastUsedAt time.Time
	// RevokedAt is when the key was revoked; zero while it is usable.
	RevokedAt time.Time
}

// Event is an event ready for the outbox: its payload and the endpoints it goes to.
type Event struct {
	ID        string
	Type      string
	CreatedAt time.Time
	// Payload is the exact JSON body that is signed and sent.
	Payload   []byte
	Endpoints []Endpoint
}

// Exchange is one visitor message and the reply to it.
type Exchange struct {
	MerchantID     string
	ConversationID string
	// NewConversation says the runtime has just made ConversationID, so no conversation has it yet: a store may
	// insert the conversation without first looking for it.
	NewConversation bool
	// ConversationExists says the runtime has just read the conversation: a store may count the exchange in it
	// without first finding out whether it still exists, and report it as not created. Should it have been
	// deleted meanwhile, the exchange still starts it again, as without the hint, but may not count it against the
	// month.
	ConversationExists bool
	// VisitorID identifies the visitor across conversations for the visitors count; may be empty.
	VisitorID string
	// MonthlyLimit is the plan's monthly conversation ceiling; 0 means none.
	MonthlyLimit int
	Question     Message
	Answer       Message
	// Contact holds contact details found in the question; when set, the lead of this visitor and conversation
	// is created or updated with them.
	Contact *Contact
	// LeadID is the ID a lead created by this exchange gets.
	LeadID string
	// Tokens are the model tokens the answer took; 0 for offline answers.
	Tokens int64
	// Outbox says where the events of this exchange go: conversation.created when it starts the conversation,
	// lead.created or lead.updated when it carries a contact.
	Outbox Outbox
}

// ExchangeResult says what RecordExchange did.
type ExchangeResult struct {
	// Created is true when the exchange started a new conversation.
	Created bool
	// Lead is the conversation's lead after the exchange, when the exchange carried a contact.
	Lead *Lead
	// Deliveries counts the deliveries written to the outbox.
	Deliveries int
}

// Role says who wrote a message.
type Role string

// The roles of a message.
const (
	RoleVisitor   Role = "visitor"
	RoleAssistant Role = "assistant"
	// RoleAgent is a message of the merchant's team.
	RoleAgent Role = "agent"
)

// Status says who answers a conversation.
type Status string

// The statuses of a conversation.
const (
	// StatusBot is answered by the assistant: every conversation starts so.
	StatusBot Status = "bot"
	// StatusWaiting waits for the merchant's team, whom the visitor asked for; the assistant is silent.
	StatusWaiting Status = "waiting"
	// StatusAgent is answered by the merchant's team; the assistant is silent.
	StatusAgent Status = "agent"
	// StatusClosed takes no more messages.
	StatusClosed Status = "closed"
)

// Statuses lists the statuses in the order a conversation usually goes through them.
var Statuses = []Status{StatusBot, StatusWaiting, StatusAgent, StatusClosed}

// StreamEvent is one event of a merchant's live-stream log: what the visitor's and the team's streams send.
type StreamEvent struct {
	// Seq numbers the merchant's events from 1, without gaps.
	Seq            int64
	ConversationID string
	Type           string
	// Payload is the event's JSON data, as the streams send it.
	Payload   []byte
	CreatedAt time.Time
}

// StreamFilter selects a merchant's live-stream events.
type StreamFilter struct {
	// After keeps the events numbered above it.
	After int64
	// ConversationID, when set, keeps one conversation's events.
	ConversationID string
	// Limit is the most events returned, 1 to 1000; 0 means 100.
	Limit int
}

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
	// Author is the name a team member's message (RoleAgent) is shown with; "" for the others.
	Author string
	// Confidence is, for an assistant message drawn from the knowledge base, the retriever's confidence, above 0
	// and up to 1, that its best item answers the question; 0 when not measured (small talk, notices, the others'
	// messages).
	Confidence float64
}

// Turn is a message as the assistant hears it: who wrote it, and what.
type Turn struct {
	Role Role
	Text string
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
	// Status says who answers the conversation; StatusBot for one never handed over.
	Status Status
	// HandoffAt is when a person was first asked for; zero when never.
	HandoffAt time.Time
	// AgentReplyAt is when the team first wrote; zero when never.
	AgentReplyAt time.Time
	// Answers counts the assistant messages, and Tokens the model tokens they took: kept with each write, so that
	// a turn checks the plan's bounds per conversation and per visitor without reading the messages.
	Answers int
	Tokens  int64
}

// The ratings of an answer.
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// Rating is a visitor's rating of one assistant message: one per message, the last one counting.
type Rating struct {
	MerchantID     string
	ConversationID string
	// MessageID is the rated assistant message.
	MessageID string
	VisitorID string
	// Rating is RatingUp or RatingDown.
	Rating string
	// Comment is the visitor's reason, optional.
	Comment   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// The scores of a conversation's rating: 1 (very dissatisfied) to 5 (very satisfied), the scale of the
// customer-satisfaction (CSAT) survey help desks send when a conversation ends.
const (
	MinSatisfaction = 1
	MaxSatisfaction = 5
	// Satisfied is the least score that counts as satisfied in the satisfaction rate (4 and 5, as CSAT counts).
	Satisfied = 4
)

// Satisfaction is a visitor's rating of a whole conversation: one per conversation, the last one counting.
type Satisfaction struct {
	MerchantID     string
	ConversationID string
	VisitorID      string
	// Score is MinSatisfaction to MaxSatisfaction.
	Score int
	// Comment is the visitor's word on the conversation, optional.
	Comment   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Miss is an answer that missed, for the review queue: one the assistant could not give, one its visitor rated
// down, or one given with little confidence.
type Miss struct {
	ConversationID string
	// MessageID is the answer's.
	MessageID string
	// Question is the visitor's question as asked, Normalized as the overview groups it.
	Question   string
	Normalized string
	Answer     string
	Sources    []Source
	Answered   bool
	// Confidence is the retriever's confidence in the answer (Message.Confidence).
	Confidence float64
	// Rating is the visitor's rating of the answer, "" when none; Comment its reason.
	Rating    string
	Comment   string
	CreatedAt time.Time
}

// ReviewFix records that a merchant dealt with a question of its review queue: misses of it until FixedAt are
// dealt with, a miss after it brings the question back.
type ReviewFix struct {
	MerchantID string
	// Question is the normalized question (Miss.Normalized).
	Question string
	// KnowledgeID is the item the fix listed the question under or wrote, "" when none.
	KnowledgeID string
	FixedAt     time.Time
}

// FeedbackWeek is one UTC week's answers and ratings.
type FeedbackWeek struct {
	// Start is the week's Monday, 00:00 UTC.
	Start                time.Time
	Answered, Unanswered int
	// Rated counts the answers rated in the week, ThumbsDown those rated down.
	Rated, ThumbsDown int
	// Surveys counts the conversations rated in the week, Satisfied those rated Satisfied or more.
	Surveys, Satisfied int
}

// FixResult is what a review fix did: how often its question was asked after it, and answered.
type FixResult struct {
	ReviewFix
	Asked, Answered int
}

// Use is what a visitor's conversations took: the assistant's answers and their model tokens.
type Use struct {
	Answers int
	Tokens  int64
}

// ConversationFilter selects conversations. Zero values select everything.
type ConversationFilter struct {
	// From and To bound the creation time: From <= created < To. Zero means unbounded.
	From, To time.Time
	// Query matches conversations with a message containing it (case-insensitive).
	Query string
	// HasLead, when set, keeps only conversations with (true) or without (false) a lead.
	HasLead *bool
	// Status, when set, keeps only conversations of that status.
	Status Status
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
	// Questions are questions visitors ask that the item answers, as the merchant lists them: each one line of
	// text. The stores keep them one a line.
	Questions []string
	// Draft keeps the item out of the answers: the assistant neither answers from it nor cites or suggests it,
	// while its merchant writes it or has taken it out of use without losing it. The API calls it the status
	// "draft", and a published item's "published".
	Draft bool
	// Curated makes the item's content the answer to its listed questions: a question that asks one of them, or
	// that the retriever matches to the item with high confidence, is answered with the content as written,
	// offline and with a model alike.
	Curated bool
	// SourceID is the knowledge source that made the item and keeps it in sync; empty for an item typed by hand.
	SourceID string
	// File is the name of the uploaded file the item was made of: an upload of a file by the same name replaces
	// the items it made (DeleteFileKnowledge). Empty for any other item.
	File      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// UseCount is how many answers cited the item.
	UseCount int
}

// KnowledgeVector is the embedding of one passage of a knowledge item (assistant.EmbeddingTexts) by an embedding
// model. Knowledge items are the merchant's published text, not visitors' data, and so are their vectors.
type KnowledgeVector struct {
	KnowledgeID string
	// Passage is the passage's number in its item, from 0.
	Passage int
	// Model names the model and the vectors' length (embeddings.Client.Model): vectors of another are not
	// comparable.
	Model string
	// TextHash is the hex SHA-256 of the text embedded: an item whose text changed is embedded again.
	TextHash string
	Vector   []float32
}

// Characters is what the item counts for towards a plan's characters ceiling: the characters of its title, its
// content and its questions, those one a line (as the stores count them, LENGTH of the columns).
func (k Knowledge) Characters() int {
	n := utf8.RuneCountInString(k.Title) + utf8.RuneCountInString(k.Content)
	for i, q := range k.Questions {
		if i > 0 {
			n++ // the line break
		}
		n += utf8.RuneCountInString(q)
	}
	return n
}

// JoinQuestions returns an item's questions as the stores keep them, one a line.
func JoinQuestions(questions []string) string { return strings.Join(questions, "\n") }

// SplitQuestions returns the questions the stores keep one a line; none for an empty text.
func SplitQuestions(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// KnowledgeFilter selects knowledge items. Zero values select everything.
type KnowledgeFilter struct {
	// Query matches items whose title, content or one of whose listed questions contains it (case-insensitive).
	Query string
	// Tag keeps only items with this tag.
	Tag string
	// Draft, when set, keeps only drafts (true) or only published items (false).
	Draft *bool
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
	// ModelTokens are the model tokens the answers took.
	ModelTokens int64
	// Leads counts the leads captured in the range.
	Leads int
	// TopQuestions are the most asked visitor questions (normalised: lower case, punctuation and extra spaces
	// removed), most first, at most 10.
	TopQuestions []QuestionCount
	// UnansweredQuestions are the most asked questions the assistant could not answer, most first, at most 10.
	UnansweredQuestions []QuestionCount
	// Handoffs counts the conversations in which a person was asked for.
	Handoffs int
	// HumanReplies counts the conversations the team wrote in after a person was asked for, and
	// HumanReplyTime is the average time from the request to the team's first message in them.
	HumanReplies   int
	HumanReplyTime time.Duration
	// ResolvedByBot counts the conversations where the assistant answered every message and nobody asked for
	// a person.
	ResolvedByBot int
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
	// Handoffs counts the day's conversations in which a person was asked for.
	Handoffs int
}

// The lead sources.
const (
	// LeadFromChat is a lead whose contact details were found in a chat message.
	LeadFromChat = "chat"
	// LeadFromForm is a lead sent through the contact form.
	LeadFromForm = "form"
)

// Contact is contact details a visitor gave.
type Contact struct {
	Name    string
	Email   string
	Phone   string
	Message string
	// Consent is true when the visitor agreed to be contacted.
	Consent bool
}

// Lead is a visitor's contact details: one per visitor and conversation, updated rather than duplicated.
type Lead struct {
	ID         string
	MerchantID string
	// ConversationID is empty for a lead sent outside a conversation.
	ConversationID string
	VisitorID      string
	Contact
	// Source is LeadFromChat or LeadFromForm: where the lead was first captured.
	Source    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// LeadInput is a contact form's submission.
type LeadInput struct {
	MerchantID     string
	ConversationID string
	VisitorID      string
	// ID is the ID a new lead gets.
	ID string
	Contact
	At time.Time
	// Outbox says where the lead's event goes.
	Outbox Outbox
}

// LeadResult says what SaveLead did.
type LeadResult struct {
	Lead Lead
	// Created is false when an existing lead was updated.
	Created    bool
	Deliveries int
}

// LeadFilter selects leads. Zero values select everything.
type LeadFilter struct {
	// From and To bound the creation time: From <= created < To. Zero means unbounded.
	From, To time.Time
	// ConversationID keeps only the leads of one conversation.
	ConversationID string
	// Limit is the page size, 1 to 100; 0 means 20.
	Limit int
	// Cursor continues a previous listing.
	Cursor string
}

// Endpoint is a webhook endpoint an event is delivered to.
type Endpoint struct {
	// WebhookID names the endpoint within its merchant.
	WebhookID string
	// URL is where it receives events; an endpoint disabled at one URL is enabled again at another.
	URL string
}

// Outbox lists, by event type, the endpoints subscribed to it. A write produces an event only when its type has
// endpoints; the event and one delivery per endpoint are written in the same transaction as the data.
type Outbox struct {
	// EventIDs are the IDs the write's events get, in order, as many as it may produce (at most two).
	EventIDs []string
	// Subscribers are the endpoints of each event type.
	Subscribers map[string][]Endpoint
}

// EndpointDisabled is the last error of the deliveries cancelled because their endpoint answered 410 Gone.
const EndpointDisabled = "the endpoint answered 410 Gone and is disabled until a delivery to it is replayed"

// DeliveryID is the ID of the delivery of an event to a webhook: unique per merchant, and readable.
func DeliveryID(eventID, webhookID string) string {
	return eventID + "-" + webhookID
}

// The delivery statuses.
const (
	// DeliveryPending is waiting for its next attempt.
	DeliveryPending = "pending"
	// DeliverySucceeded got a 2xx answer.
	DeliverySucceeded = "succeeded"
	// DeliveryFailed ran out of attempts, got an answer that retrying cannot change, or disabled its endpoint.
	DeliveryFailed = "failed"
	// DeliveryCancelled was not sent: its endpoint was removed, disabled, or the plan lost webhooks.
	DeliveryCancelled = "cancelled"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	// ID identifies the delivery; the event's ID is the webhook-id header, the same on every attempt.
	ID         string
	MerchantID string
	EventID    string
	EventType  string
	Endpoint
	// Payload is the event's JSON body.
	Payload []byte
	// EventCreatedAt is when the event happened.
	EventCreatedAt time.Time
	Status         string
	// Attempts counts the attempts made.
	Attempts int
	// NextAttemptAt is when a pending delivery is due.
	NextAttemptAt time.Time
	// LastStatusCode is the last attempt's HTTP status, 0 when there was no answer.
	LastStatusCode int
	// LastError says why the last attempt failed, if it did.
	LastError string
	// LastLatency is how long the last attempt took.
	LastLatency time.Duration
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Attempt is one try at a delivery and what came of it.
type Attempt struct {
	MerchantID string
	DeliveryID string
	At         time.Time
	// URL is where the attempt was sent: the endpoint's URL at that time.
	URL string
	// StatusCode is the answer's HTTP status, 0 when there was no answer.
	StatusCode int
	Latency    time.Duration
	// Error says why the attempt failed, if it did.
	Error string
	// Status is the delivery's status after the attempt.
	Status string
	// NextAttemptAt is when a delivery left pending is due again.
	NextAttemptAt time.Time
	// DisableEndpoint marks the delivery's endpoint as gone (HTTP 410).
	DisableEndpoint bool
}

// DeliveryFilter selects deliveries. Zero values select everything.
type DeliveryFilter struct {
	// Status keeps only deliveries with this status.
	Status string
	// EventType keeps only deliveries of this event type.
	EventType string
	// WebhookID keeps only deliveries to this endpoint.
	WebhookID string
	// From and To bound the creation time: From <= created < To. Zero means unbounded.
	From, To time.Time
	// Limit is the page size, 1 to 100; 0 means 20.
	Limit int
	// Cursor continues a previous listing.
	Cursor string
}

// Key is what listings order conversations by, newest first: the creation time, then the ID.
func (c Conversation) Key() (time.Time, string) { return c.CreatedAt, c.ID }

// Key is what listings order knowledge items by, newest first: the creation time, then the ID.
func (k Knowledge) Key() (time.Time, string) { return k.CreatedAt, k.ID }

// Key is what listings order leads by, newest first: the creation time, then the ID.
func (l Lead) Key() (time.Time, string) { return l.CreatedAt, l.ID }

// Key is what listings order deliveries by, newest first: the creation time, then the ID.
func (d Delivery) Key() (time.Time, string) { return d.CreatedAt, d.ID }
