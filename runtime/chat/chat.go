// Package chat holds the runtime's use cases, each rule once and with no HTTP and no SQL: answering a visitor's
// message (the monthly ceiling, the answer, and one write of the conversation, its messages, citations, lead and
// events), the contact form, knowledge writes and the retrieval indexes, the webhook delivery log and replay,
// and which events go to which endpoints. Transports (runtime/server) call a Service; stores (runtime/store)
// provide the statements the rules are written in.
package chat

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/contact"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Config wires a Service.
type Config struct {
	Store     store.Store
	Responder assistant.Responder
	// Offline answers for merchants past their plan's monthly model tokens; assistant.Retrieval when nil.
	Offline assistant.Responder
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Notify is called after a use case wrote webhook deliveries to the outbox, to wake the dispatcher; may be
	// nil (dispatchers then find them when they next poll).
	Notify func()
	// Published is called with a merchant's ID after a use case wrote to its live-stream log, to wake the
	// merchant's streams; may be nil (streams then find the events when they next poll).
	Published func(merchantID string)
	// Embedders, by provider, embed the question of each turn for a search by meaning, fused with the words',
	// over the knowledge's vectors a KnowledgeEmbedder stores; a merchant whose provider has none is searched by
	// words alone.
	Embedders Embedders
	// QuestionTimeout bounds the embedding of a question, past which it is searched by words alone;
	// DefaultQuestionTimeout when 0.
	QuestionTimeout time.Duration
	// IndexCacheBytes bounds the estimated bytes of the retrieval indexes kept in memory, least recently used
	// evicted first; 0 keeps every index.
	IndexCacheBytes int64
	// Registry receives the service's metrics; nil registers none.
	Registry prometheus.Registerer
	// Logger receives what the service reports of its own accord; nil discards it.
	Logger *slog.Logger
}

// Service runs the use cases of every merchant the runtime serves.
type Service struct {
	store     store.Store
	responder assistant.Responder
	offline   assistant.Responder
	indexes   *indexCache
	// embedders embed questions (none: words alone), within questionTimeout; wordsOnly counts the questions
	// searched by words alone because embedding them failed.
	embedders       Embedders
	questionTimeout time.Duration
	wordsOnly       *prometheus.CounterVec
	// embedWake gives a merchant a turn of the KnowledgeEmbedder of this process, when one runs.
	embedWake func(merchantID string)
	keys      keyCache
	exports   *running // exports running, per merchant
	refused   *refusals
	log       *slog.Logger
	now       func() time.Time
	notify    func()
	// syncWake wakes the Syncer of this process, when one runs (NewSyncer).
	syncWake chan struct{}
	// declared are the declared knowledge sources this process could not store, for the operator's report.
	declared  declaredRefusals
	published func(merchantID string)
}

// New builds a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Responder == nil {
		return nil, errors.New("chat: store and responder are required")
	}
	if cfg.IndexCacheBytes < 0 {
		return nil, errors.New("chat: the index cache's budget must not be negative")
	}
	indexes, err := newIndexCache(cfg.Store, cfg.IndexCacheBytes, cfg.Registry)
	if err != nil {
		return nil, err
	}
	refused, err := newRefusals(cfg.Registry)
	if err != nil {
		return nil, err
	}
	wordsOnly, err := newWordsOnlyCounter(cfg.Registry)
	if err != nil {
		return nil, err
	}
	s := &Service{store: cfg.Store, responder: cfg.Responder, offline: cfg.Offline, indexes: indexes,
		embedders: cfg.Embedders, questionTimeout: cmp.Or(cfg.QuestionTimeout, DefaultQuestionTimeout), wordsOnly: wordsOnly,
		exports: &running{max: MaxExportsPerMerchant}, refused: refused, log: cfg.Logger, now: cfg.Now, notify: cfg.Notify,
		published: cfg.Published}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.offline == nil {
		s.offline = assistant.Retrieval{}
	}
	return s, nil
}

// Store is where the service keeps its data; transports read through it.
func (s *Service) Store() store.Reader { return s.store }

// Question is a visitor's message to a merchant.
type Question struct {
	Message string
	// ConversationID continues a conversation, or starts one of that ID; empty starts a new one.
	ConversationID string
	// VisitorID identifies the visitor across conversations; may be empty.
	VisitorID string
	// VisitorOnly limits the message to a new conversation of the runtime's naming or to one its visitor
	// started (the same non-empty VisitorID): set for a browser's message, whose publishable key every visitor
	// of the page holds. Such a message neither names a new conversation, which would let a page claim an ID the
	// merchant's server is yet to use, nor continues one started without a visitor ID, which every other holder
	// of the key could name as well. The merchant's own server names and continues any of its conversations.
	VisitorOnly bool
	// Handoff asks for a person of the merchant's team, as a message that asks in words does.
	Handoff bool
	// AdmitNew, when set, is asked before a new conversation is started, and refuses it with its error.
	AdmitNew func() error
	// Delta, when set, receives the answer in pieces as it is written (see assistant.Request.Delta).
	Delta func(piece string)
	// Language is the BCP 47 language the visitor's widget speaks; may be empty (see assistant.Request.Language).
	Language string
}

// Reply is the assistant's answer, as stored.
type Reply struct {
	ConversationID string
	Message        store.Message
	// Usage is what the model provider billed for the answer; zero for offline answers.
	Usage assistant.Usage
	// Cut is why the model's answer ended before it was done (assistant.CutLength, assistant.CutContentFilter);
	// "" for a whole answer.
	Cut string
	// Status is the conversation's status after the message.
	Status store.Status
	// Silent says the assistant did not answer: the conversation waits for the team or the team answers it, and
	// Message is the visitor's own, as stored.
	Silent bool
	// AgentsAvailable, set when the message asked for a person, says whether someone of the team is there;
	// Message is then the assistant's notice saying so.
	AgentsAvailable *bool
}

// MaxConversationMessages is the most messages a conversation holds, questions and answers. It bounds what each
// turn and the conversation's page read, which a visitor with the page's public key could otherwise grow without
// end; a visitor's conversation with a help desk's assistant rarely passes a few dozen.
const MaxConversationMessages = store.MaxConversationMessages

// ErrNotVisitorsConversation refuses a message limited to its visitor's conversations (Question.VisitorOnly)
// that names a conversation the visitor did not start, or none that exists.
var ErrNotVisitorsConversation = errors.New("the visitor has no conversation of that ID")

// startedBy reports whether a conversation whose visitor ID is started is the visitor's: one started without a
// visitor ID is no browser's. With the conversation ID, the visitor ID is what a browser proves a conversation
// its own with, so the two are compared in constant time.
func startedBy(started, visitor string) bool {
	return started != "" && subtle.ConstantTimeCompare([]byte(started), []byte(visitor)) == 1
}

// ErrConversationFull refuses a turn that would take a conversation past MaxConversationMessages: the visitor
// goes on in a new conversation. The store returns it for turns that arrived together.
var ErrConversationFull = store.ErrConversationFull

// Answer answers a visitor's message from the merchant's knowledge and stores question and answer in one
// transaction. A new conversation past the plan's monthly ceiling is refused with store.ErrQuotaExceeded before
// any work is done, and exactly again when it is written; a turn past the conversation's messages, with
// ErrConversationFull; a browser's turn past the plan's bounds per conversation or per visitor, with
// ErrConversationLimit or ErrVisitorLimit (the merchant's own server, whose secret key no visitor holds, is
// bounded by the plan's monthly tokens alone); a browser's turn in a conversation not its visitor's, with
// ErrNotVisitorsConversation.
// When ctx is cancelled while the model writes, the model's request is closed, the question is stored with the
// part of the answer written and its tokens counted, and an *assistant.InterruptedError is returned.
func (s *Service) Answer(ctx context.Context, m *tenant.Bundle, q Question) (Reply, error) {
	responder, metered, err := s.responderFor(ctx, m)
	if err != nil {
		return Reply{}, err
	}
	exists, made := false, false
	var history []assistant.Turn
	if q.ConversationID != "" {
		c, latest, err := s.store.ConversationTail(ctx, m.MerchantID, q.ConversationID, historyFor(responder, q.Message))
		switch {
		case q.VisitorOnly && (errors.Is(err, store.ErrNotFound) || err == nil && !startedBy(c.VisitorID, q.VisitorID)):
			return Reply{}, ErrNotVisitorsConversation
		case err == nil && c.Status == store.StatusClosed:
			return Reply{}, ErrConversationClosed
		case err == nil && c.MessageCount+2 > MaxConversationMessages:
			return Reply{}, ErrConversationFull
		case err == nil && c.Status != store.StatusBot:
			// The team has the conversation: the assistant stays silent, whatever the message says.
			return s.visitorWrote(ctx, m, c, q)
		case err == nil:
			if q.VisitorOnly {
				if err := checkConversation(m, c); err != nil {
					return Reply{}, err
				}
			}
			exists, history = true, turns(latest)
		case !errors.Is(err, store.ErrNotFound):
			return Reply{}, fmt.Errorf("loading conversation %s: %w", q.ConversationID, err)
		}
	} else {
		q.ConversationID, made = ids.New("conv_"), true
	}
	if q.VisitorOnly {
		if err := s.checkVisitor(ctx, m, q.VisitorID); err != nil {
			return Reply{}, err
		}
	}
	if !exists {
		if q.AdmitNew != nil {
			if err := q.AdmitNew(); err != nil {
				return Reply{}, err
			}
		}
		if err := s.checkQuota(ctx, m); err != nil {
			return Reply{}, err
		}
	}
	if l, asks := asksForPerson(q.Message); asks || q.Handoff {
		if !asks {
			l = personLanguageFor(cmp.Or(q.Language, m.Widget.Locale))
		}
		return s.handOffInWords(ctx, m, q, exists, made, l)
	}
	index, err := s.index(ctx, m)
	if err != nil {
		return Reply{}, err
	}
	vector, embedTokens := s.questionVector(ctx, m, index, metered, assistant.StandaloneQuestion(q.Message, history))
	reply, err := responder.Respond(ctx, assistant.Request{
		Message: q.Message, Index: index, FallbackMessage: m.Assistant.FallbackMessage,
		Instructions: m.Assistant.Instructions, Locale: m.Widget.Locale, Language: q.Language, History: history,
		Provider: m.Assistant.Provider, Model: m.Assistant.Model, APIKey: m.Assistant.APIKey, Delta: q.Delta,
		QueryVector: vector,
	})
	var interrupted *assistant.InterruptedError
	switch {
	case errors.As(err, &interrupted):
		// The visitor went away and the model stopped: the question and what was written of its answer are stored
		// and their tokens counted, so that hanging up neither loses the question nor spends the model unmetered.
		reply, ctx = interrupted.Partial, context.WithoutCancel(ctx)
	case err != nil:
		return Reply{}, fmt.Errorf("answering: %w", err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	ex := store.Exchange{
		MerchantID: m.MerchantID, ConversationID: q.ConversationID, NewConversation: made, ConversationExists: exists,
		VisitorID:    q.VisitorID,
		MonthlyLimit: int(m.Plan.MonthlyConversations),
		Question:     store.Message{ID: ids.New("msg_"), Role: store.RoleVisitor, Text: q.Message, CreatedAt: now, Answered: true},
		Answer: store.Message{ID: ids.New("msg_"), Role: store.RoleAssistant, Text: reply.Text, CreatedAt: now,
			Answered: reply.Answered, Sources: storeSources(reply.Sources), Confidence: reply.Confidence},
		Contact: chatContact(q.Message),
		Outbox:  Route(m),
		Tokens:  reply.Usage.PromptTokens + reply.Usage.CompletionTokens + embedTokens,
	}
	if ex.Contact != nil {
		ex.LeadID = ids.New("lead_")
	}
	res, err := RecordExchange(ctx, s.store, ex)
	if err != nil {
		return Reply{}, err
	}
	s.written(res.Deliveries)
	if interrupted != nil {
		return Reply{}, fmt.Errorf("answering: %w", interrupted)
	}
	return Reply{ConversationID: q.ConversationID, Message: ex.Answer, Usage: reply.Usage, Cut: reply.Cut, Status: store.StatusBot}, nil
}

// Preview answers an owner trying the widget in the dashboard's live preview as a visitor would be answered (the
// merchant's knowledge, assistant and fallback), and stores no conversation, lead, event or analytics. Each
// message is answered on its own, without the preview's earlier turns. The model's tokens are the merchant's,
// as a visitor's answer's are: counted against the plan's monthlyTokens, past which the preview answers offline,
// so that the preview is no unmetered way to the platform's model provider.
func (s *Service) Preview(ctx context.Context, m *tenant.Bundle, message string) (assistant.Reply, error) {
	index, err := s.index(ctx, m)
	if err != nil {
		return assistant.Reply{}, err
	}
	responder, metered, err := s.responderFor(ctx, m)
	if err != nil {
		return assistant.Reply{}, err
	}
	vector, embedTokens := s.questionVector(ctx, m, index, metered, message)
	reply, err := responder.Respond(ctx, assistant.Request{Message: message, Index: index, FallbackMessage: m.Assistant.FallbackMessage,
		Instructions: m.Assistant.Instructions, Locale: m.Widget.Locale, Provider: m.Assistant.Provider, Model: m.Assistant.Model,
		APIKey: m.Assistant.APIKey, QueryVector: vector})
	var interrupted *assistant.InterruptedError
	switch {
	case errors.As(err, &interrupted):
		reply = interrupted.Partial // the owner went away: what the model wrote is still counted
	case err != nil:
		return assistant.Reply{}, fmt.Errorf("answering the preview: %w", err)
	}
	if n := reply.Usage.PromptTokens + reply.Usage.CompletionTokens + embedTokens; n > 0 {
		at, ctx := s.now().UTC(), context.WithoutCancel(ctx)
		err := s.store.Write(ctx, func(tx store.Tx) error { return tx.AddMonthlyTokens(ctx, m.MerchantID, at, n) })
		if err != nil {
			return assistant.Reply{}, fmt.Errorf("counting the preview's tokens: %w", err)
		}
	}
	if interrupted != nil {
		return assistant.Reply{}, fmt.Errorf("answering the preview: %w", interrupted)
	}
	return reply, nil
}

// Candidates returns up to k of the merchant's items that may answer question, best first: where a merchant
// looks for the item to list a question under that the assistant did not answer.
func (s *Service) Candidates(ctx context.Context, m *tenant.Bundle, question string, k int) ([]assistant.Hit, error) {
	index, err := s.index(ctx, m)
	if err != nil {
		return nil, err
	}
	return index.Search(question, k), nil
}

// maxHistory is the most earlier messages handed to the responder, which bounds them further by its own budget.
const maxHistory = 20

// historyFor is how many of a conversation's latest messages responder hears when answering message: maxHistory,
// or fewer when it says so (assistant.HistoryLimiter).
func historyFor(responder assistant.Responder, message string) int {
	if l, ok := responder.(assistant.HistoryLimiter); ok {
		return min(maxHistory, l.HistoryFor(message))
	}
	return maxHistory
}

// turns are a conversation's latest messages as the responder sees them.
func turns(latest []store.Turn) []assistant.Turn {
	out := make([]assistant.Turn, len(latest))
	for i, t := range latest {
		out[i] = assistant.Turn{Visitor: t.Role == store.RoleVisitor, Text: t.Text}
	}
	return out
}

// responderFor is the service's responder, or the offline one once the merchant's answers took the plan's monthly
// model tokens, and whether the provider may be asked (for the question's embedding too). The ceiling is checked
// before answering, so the answer that crosses it is given whole.
func (s *Service) responderFor(ctx context.Context, m *tenant.Bundle) (assistant.Responder, bool, error) {
	if m.Plan.MonthlyTokens == 0 {
		return s.responder, true, nil
	}
	used, err := s.store.TokensThisMonth(ctx, m.MerchantID, s.now())
	if err != nil {
		return nil, false, err
	}
	if used >= m.Plan.MonthlyTokens {
		return s.offline, false, nil
	}
	return s.responder, true, nil
}

// ErrConversationLimit refuses a turn of a conversation that has had the answers, or taken the model tokens, its
// merchant's plan allows one conversation (tenant.Plan.ConversationTurns and ConversationTokens): the visitor goes
// on in a new conversation, which the plan's new conversations per visitor and address bound.
var ErrConversationLimit = errors.New("the conversation has had the answers or model tokens the merchant's plan allows")

// ErrVisitorLimit refuses a turn of a visitor whose conversations started in the last 24 hours have had the
// answers, or taken the model tokens, its merchant's plan allows a visitor (tenant.Plan.VisitorTurns and
// VisitorTokens).
var ErrVisitorLimit = errors.New("the visitor has had the answers or model tokens the merchant's plan allows a day")

// visitorWindow is how far back a visitor's conversations count against the plan's bounds per visitor.
const visitorWindow = 24 * time.Hour

// checkConversation refuses a turn of conversation c past the plan's bounds per conversation. Like the monthly
// ceilings, they are checked before answering: the answer that crosses one is given whole.
func checkConversation(m *tenant.Bundle, c store.Conversation) error {
	if c.MessageCount/2 >= m.Plan.ConversationTurns() {
		return ErrConversationLimit
	}
	if c.Tokens >= m.Plan.ConversationTokens() {
		return ErrConversationLimit
	}
	return nil
}

// checkVisitor refuses a turn of a visitor (a non-empty visitor ID) past the plan's bounds per visitor: the
// page's public key is every visitor's, and these keep one of them from spending what the merchant's month
// holds for all.
func (s *Service) checkVisitor(ctx context.Context, m *tenant.Bundle, visitorID string) error {
	if visitorID == "" {
		return nil
	}
	use, err := s.store.VisitorUse(ctx, m.MerchantID, visitorID, s.now().Add(-visitorWindow))
	if err != nil {
		return err
	}
	if use.Answers >= m.Plan.VisitorTurns() || use.Tokens >= m.Plan.VisitorTokens() {
		return ErrVisitorLimit
	}
	return nil
}

// checkQuota refuses a new conversation once the month's ceiling is reached. The write checks again, exactly.
func (s *Service) checkQuota(ctx context.Context, m *tenant.Bundle) error {
	if m.Plan.MonthlyConversations == 0 {
		return nil
	}
	n, err := s.store.ConversationsThisMonth(ctx, m.MerchantID, s.now())
	if err != nil {
		return err
	}
	if n >= int(m.Plan.MonthlyConversations) {
		return store.ErrQuotaExceeded
	}
	return nil
}

// LeadForm is what a visitor sent through the contact form.
type LeadForm struct {
	store.Contact
	// ConversationID names the conversation the form was opened in; may be empty.
	ConversationID string
	VisitorID      string
}

// SaveLead stores a contact form's lead: a new one, or the visitor's lead of the conversation completed. Only the
// visitor who started the conversation, named by a non-empty visitor ID, can attach a lead to it: a form naming
// another visitor's conversation, one started without a visitor ID, or one that does not exist yet (the form
// before the first message) leaves the lead on its own, so that it neither reads nor changes anyone else's lead
// and the answer does not tell which conversations exist.
func (s *Service) SaveLead(ctx context.Context, m *tenant.Bundle, f LeadForm) (store.LeadResult, error) {
	conversationID := f.ConversationID
	if conversationID != "" {
		visitor, err := s.store.ConversationVisitor(ctx, m.MerchantID, conversationID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return store.LeadResult{}, err
		}
		if err != nil || !startedBy(visitor, f.VisitorID) {
			conversationID = ""
		}
	}
	res, err := saveFormLead(ctx, s.store, store.LeadInput{MerchantID: m.MerchantID, ConversationID: conversationID,
		VisitorID: f.VisitorID, ID: ids.New("lead_"), Contact: f.Contact, At: s.now().UTC().Truncate(time.Millisecond),
		Outbox: Route(m)})
	if err != nil {
		return store.LeadResult{}, err
	}
	s.written(res.Deliveries)
	return res, nil
}

// CreateKnowledge adds an item to the merchant's knowledge base, within the plan's item ceiling
// (store.ErrKnowledgeLimit) and characters ceiling (store.ErrKnowledgeSizeLimit), and returns it with its ID and
// times.
func (s *Service) CreateKnowledge(ctx context.Context, m *tenant.Bundle, k store.Knowledge) (store.Knowledge, error) {
	k = s.newItem(m, k)
	if err := createKnowledge(ctx, s.store, k, KnowledgeLimitsOf(m.Plan)); err != nil {
		return store.Knowledge{}, err
	}
	s.knowledgeChanged(ctx, m.MerchantID)
	return k, nil
}

// UpdateKnowledge replaces the title, content, URL, tags, questions and draft status of the item old with k's,
// within the plan's characters ceiling (store.ErrKnowledgeSizeLimit), or returns store.ErrNotFound when it is gone.
func (s *Service) UpdateKnowledge(ctx context.Context, m *tenant.Bundle, old, k store.Knowledge) (store.Knowledge, error) {
	k = s.changedItem(m, old, k)
	if err := updateKnowledge(ctx, s.store, k, int(m.Plan.KnowledgeCharacters)); err != nil {
		return store.Knowledge{}, err
	}
	s.knowledgeChanged(ctx, m.MerchantID)
	return k, nil
}

// newItem returns k as a new item of the merchant: a new ID, created now, never used.
func (s *Service) newItem(m *tenant.Bundle, k store.Knowledge) store.Knowledge {
	now := s.now().UTC().Truncate(time.Millisecond)
	k.ID, k.MerchantID, k.CreatedAt, k.UpdatedAt, k.UseCount = ids.New("kn_"), m.MerchantID, now, now, 0
	return k
}

// changedItem returns k as the item old changed now: old's ID, creation and use count.
func (s *Service) changedItem(m *tenant.Bundle, old, k store.Knowledge) store.Knowledge {
	k.ID, k.MerchantID, k.CreatedAt, k.UseCount = old.ID, m.MerchantID, old.CreatedAt, old.UseCount
	k.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
	return k
}

// DeleteKnowledge removes an item, or returns store.ErrNotFound.
func (s *Service) DeleteKnowledge(ctx context.Context, m *tenant.Bundle, id string) error {
	if err := deleteKnowledge(ctx, s.store, m.MerchantID, id); err != nil {
		return err
	}
	s.knowledgeChanged(ctx, m.MerchantID)
	return nil
}

// ReplayDelivery sends a finished delivery again; see the function replayDelivery.
func (s *Service) ReplayDelivery(ctx context.Context, m *tenant.Bundle, id string) (store.Delivery, error) {
	d, err := replayDelivery(ctx, s.store, m.MerchantID, id, s.now())
	if err != nil {
		return store.Delivery{}, err
	}
	s.written(1)
	return d, nil
}

// ErrWebhooksNotInPlan refuses a test event to a merchant whose plan does not include webhooks.
var ErrWebhooksNotInPlan = errors.New("the merchant's plan does not include webhooks")

// SendTestEvent writes a webhook.test event for the merchant's webhook webhookID, delivered to that endpoint
// alone whatever the events it subscribes to, and returns the delivery: logged, retried and replayable like any
// other. It returns store.ErrNotFound for no such webhook and ErrWebhooksNotInPlan on a plan without webhooks.
// To an endpoint a 410 disabled, the delivery is written cancelled; replaying it enables the endpoint again.
func (s *Service) SendTestEvent(ctx context.Context, m *tenant.Bundle, webhookID string) (store.Delivery, error) {
	if !m.Plan.Webhooks {
		return store.Delivery{}, ErrWebhooksNotInPlan
	}
	i := slices.IndexFunc(m.Webhooks, func(w tenant.Webhook) bool { return w.ID == webhookID })
	if i < 0 {
		return store.Delivery{}, fmt.Errorf("sending a test event to webhook %q: %w", webhookID, store.ErrNotFound)
	}
	eventID := ids.New("evt_")
	o := store.Outbox{EventIDs: []string{eventID}, Subscribers: map[string][]store.Endpoint{
		event.WebhookTest: {{WebhookID: webhookID, URL: m.Webhooks[i].URL}},
	}}
	err := s.store.Write(ctx, func(tx store.Tx) error {
		_, err := writeEvents(ctx, tx, m.MerchantID, o, []event.Happened{event.Test(webhookID, s.now().UTC().Truncate(time.Millisecond))})
		return err
	})
	if err != nil {
		return store.Delivery{}, fmt.Errorf("sending a test event to webhook %q: %w", webhookID, err)
	}
	s.written(1)
	d, _, err := s.store.GetDelivery(ctx, m.MerchantID, store.DeliveryID(eventID, webhookID))
	if err != nil {
		return store.Delivery{}, fmt.Errorf("reading the test event's delivery: %w", err)
	}
	return d, nil
}

// written wakes the webhook dispatcher when a use case put deliveries in the outbox.
func (s *Service) written(deliveries int) {
	if deliveries > 0 && s.notify != nil {
		s.notify()
	}
}

// chatContact is the contact a chat message carries, or nil.
func chatContact(message string) *store.Contact {
	email, phone := contact.Find(message)
	if email == "" && phone == "" {
		return nil
	}
	return &store.Contact{Email: email, Phone: phone}
}

func storeSources(in []assistant.Source) []store.Source {
	out := make([]store.Source, len(in))
	for i, src := range in {
		out[i] = store.Source{KnowledgeID: src.KnowledgeID, Title: src.Title, URL: src.URL, Snippet: src.Snippet, Score: src.Score}
	}
	return out
}

// Ping checks that the store answers.
func (s *Service) Ping(ctx context.Context) error { return s.store.Ping(ctx) }
