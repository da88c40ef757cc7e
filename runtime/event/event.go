// Package event builds the webhook events a merchant's endpoints receive: their types and the JSON payloads
// described in the OpenAPI document's webhooks section. The payload is built once, when the event happens, and
// stored as the exact bytes that are signed and sent on every attempt.
package event

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/store"
)

// The event types, as the operator and the runtime agree on them.
const (
	ConversationCreated = contract.EventConversationCreated
	LeadCreated         = contract.EventLeadCreated
	LeadUpdated         = contract.EventLeadUpdated
	HandoffRequested    = contract.EventConversationHandoffRequested
	AgentMessage        = contract.EventConversationAgentMessage
	ConversationClosed  = contract.EventConversationClosed
	FeedbackCreated     = contract.EventFeedbackCreated
	PrivacyErased       = contract.EventPrivacyErased
	// WebhookTest is sent on request to one endpoint; no Webhook subscribes to it.
	WebhookTest = contract.EventWebhookTest
)

// Types lists every event type the runtime sends, in the order the documentation gives them.
var Types = append(contract.Events(), WebhookTest)

// Happened is an event that happened, before it has an ID: its type, time and data.
type Happened struct {
	Type string
	At   time.Time
	data any
}

// envelope is an event's body as webhooks receive it (the Standard Webhooks payload shape: type, timestamp,
// data), with the event's ID and merchant.
type envelope struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Timestamp  time.Time `json:"timestamp"`
	MerchantID string    `json:"merchant_id"`
	Data       any       `json:"data"`
}

type conversationData struct {
	ConversationID string    `json:"conversation_id"`
	VisitorID      string    `json:"visitor_id,omitempty"`
	FirstMessage   string    `json:"first_message"`
	Status         string    `json:"status"`
	CreatedAt      time.Time `json:"created_at"`
}

// MessageData is a message as events and streams carry it.
type MessageData struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	Text string `json:"text"`
	// Author is a team member's name, for a message of the role agent.
	Author    string    `json:"author,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Message is m as events and streams carry it.
func Message(m store.Message) MessageData {
	return MessageData{ID: m.ID, Role: string(m.Role), Text: m.Text, Author: m.Author, CreatedAt: m.CreatedAt.UTC()}
}

type handoffData struct {
	ConversationID string `json:"conversation_id"`
	VisitorID      string `json:"visitor_id,omitempty"`
	Status         string `json:"status"`
	// AgentsAvailable says whether the visitor was told that someone of the team is there.
	AgentsAvailable bool          `json:"agents_available"`
	RequestedAt     time.Time     `json:"requested_at"`
	Transcript      []MessageData `json:"transcript"`
}

type agentMessageData struct {
	ConversationID string      `json:"conversation_id"`
	Status         string      `json:"status"`
	Message        MessageData `json:"message"`
}

type closedData struct {
	ConversationID string    `json:"conversation_id"`
	Status         string    `json:"status"`
	ClosedAt       time.Time `json:"closed_at"`
}

// Handoff is the conversation.handoff_requested event of conversation c, whose messages up to the request are
// transcript, oldest first.
func Handoff(c store.Conversation, transcript []store.Message, available bool, at time.Time) Happened {
	msgs := make([]MessageData, len(transcript))
	for i, m := range transcript {
		msgs[i] = Message(m)
	}
	return Happened{Type: HandoffRequested, At: at, data: handoffData{ConversationID: c.ID, VisitorID: c.VisitorID,
		Status: string(store.StatusWaiting), AgentsAvailable: available, RequestedAt: at.UTC(), Transcript: msgs}}
}

// AgentWrote is the conversation.agent_message event of a team member's message m in conversation id.
func AgentWrote(id string, m store.Message) Happened {
	return Happened{Type: AgentMessage, At: m.CreatedAt, data: agentMessageData{ConversationID: id,
		Status: string(store.StatusAgent), Message: Message(m)}}
}

// Closed is the conversation.closed event of conversation id.
func Closed(id string, at time.Time) Happened {
	return Happened{Type: ConversationClosed, At: at, data: closedData{ConversationID: id,
		Status: string(store.StatusClosed), ClosedAt: at.UTC()}}
}

type leadData struct {
	LeadID         string    `json:"lead_id"`
	ConversationID string    `json:"conversation_id,omitempty"`
	VisitorID      string    `json:"visitor_id,omitempty"`
	Name           string    `json:"name,omitempty"`
	Email          string    `json:"email,omitempty"`
	Phone          string    `json:"phone,omitempty"`
	Message        string    `json:"message,omitempty"`
	Consent        bool      `json:"consent"`
	Source         string    `json:"source"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// The kinds of feedback a feedback.created event carries.
const (
	FeedbackAnswer       = "answer"
	FeedbackConversation = "conversation"
)

type feedbackData struct {
	Kind           string    `json:"kind"`
	ConversationID string    `json:"conversation_id"`
	VisitorID      string    `json:"visitor_id"`
	MessageID      string    `json:"message_id,omitempty"`
	Rating         string    `json:"rating,omitempty"`
	Score          int       `json:"score,omitempty"`
	Comment        string    `json:"comment,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// AnswerRated is the feedback.created event of a visitor's rating of an answer.
func AnswerRated(r store.Rating) Happened {
	return Happened{Type: FeedbackCreated, At: r.UpdatedAt, data: feedbackData{
		Kind: FeedbackAnswer, ConversationID: r.ConversationID, VisitorID: r.VisitorID, MessageID: r.MessageID,
		Rating: r.Rating, Comment: r.Comment, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}}
}

// ConversationRated is the feedback.created event of a visitor's rating of a conversation.
func ConversationRated(s store.Satisfaction) Happened {
	return Happened{Type: FeedbackCreated, At: s.UpdatedAt, data: feedbackData{
		Kind: FeedbackConversation, ConversationID: s.ConversationID, VisitorID: s.VisitorID, Score: s.Score,
		Comment: s.Comment, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(),
	}}
}

// testMessage says what a webhook.test event is, for whoever reads a receiver's log.
const testMessage = "A test event sent at the merchant's request. It describes nothing that happened: acknowledge it with a 2xx answer."

type testData struct {
	WebhookID string `json:"webhook_id"`
	Message   string `json:"message"`
}

// Test is the webhook.test event an owner sends to the webhook webhookID to see that it receives and verifies
// deliveries.
func Test(webhookID string, at time.Time) Happened {
	return Happened{Type: WebhookTest, At: at, data: testData{WebhookID: webhookID, Message: testMessage}}
}

// ConversationStarted is the conversation.created event of the conversation an exchange started, in status.
func ConversationStarted(ex store.Exchange, status store.Status) Happened {
	return Happened{Type: ConversationCreated, At: ex.Question.CreatedAt, data: conversationData{
		ConversationID: ex.ConversationID, VisitorID: ex.VisitorID, FirstMessage: ex.Question.Text,
		Status: string(status), CreatedAt: ex.Question.CreatedAt.UTC(),
	}}
}

// LeadSaved is the lead.created or lead.updated event of a lead.
func LeadSaved(l store.Lead, created bool) Happened {
	typ := LeadUpdated
	if created {
		typ = LeadCreated
	}
	return Happened{Type: typ, At: l.UpdatedAt, data: leadData{
		LeadID: l.ID, ConversationID: l.ConversationID, VisitorID: l.VisitorID, Name: l.Name, Email: l.Email,
		Phone: l.Phone, Message: l.Message, Consent: l.Consent, Source: l.Source, CreatedAt: l.CreatedAt.UTC(),
		UpdatedAt: l.UpdatedAt.UTC(),
	}}
}

// Erased counts what one erasure of a data subject's records deleted.
type Erased struct {
	// ErasureID names the request that erased, as its answer does, so that the merchant can tell which request
	// an event reports without the event naming the subject.
	ErasureID     string `json:"erasure_id"`
	Conversations int    `json:"conversations"`
	Messages      int    `json:"messages"`
	Leads         int    `json:"leads"`
}

// SubjectErased is the privacy.erased event of an erasure: counts only, never the subject nor what was erased,
// since the outbox keeps its payload.
func SubjectErased(e Erased, at time.Time) Happened {
	return Happened{Type: PrivacyErased, At: at, data: e}
}

// Build turns what one write made happen into the events for the outbox: for each type that has subscribers,
// in order, the next of the outbox's event IDs and the payload. Types nobody subscribed to produce nothing. It
// fails when the outbox has too few IDs.
func Build(merchantID string, o store.Outbox, happened ...Happened) ([]store.Event, error) {
	var events []store.Event
	for _, h := range happened {
		endpoints := o.Subscribers[h.Type]
		if len(endpoints) == 0 {
			continue
		}
		if len(events) >= len(o.EventIDs) {
			return nil, fmt.Errorf("the outbox has %d event IDs, fewer than the events to write", len(o.EventIDs))
		}
		id := o.EventIDs[len(events)]
		payload, err := json.Marshal(envelope{ID: id, Type: h.Type, Timestamp: h.At.UTC(), MerchantID: merchantID, Data: h.data})
		if err != nil {
			return nil, fmt.Errorf("encoding event %s: %w", h.Type, err)
		}
		events = append(events, store.Event{ID: id, Type: h.Type, CreatedAt: h.At, Payload: payload, Endpoints: endpoints})
	}
	return events, nil
}
