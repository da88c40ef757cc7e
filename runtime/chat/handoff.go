package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// ErrConversationClosed refuses a message into, or a change of, a closed conversation: the visitor goes on in a
// new one.
var ErrConversationClosed = errors.New("the conversation is closed")

// ErrEmptyMessage refuses a team member's message without text.
var ErrEmptyMessage = errors.New("the message has no text")

// presenceWindow is how long after the team's inbox was last open someone of the team counts as there: the
// inbox's stream and its polling touch the presence more often than this.
const presenceWindow = 2 * time.Minute

// The stream events: what the visitor's and the team's live streams carry (see StreamEvents).
const (
	// StreamMessage is a new message in a conversation handed to the team: a visitor's, a team member's, or the
	// assistant's notice that a person was asked for.
	StreamMessage = "message"
	// StreamStatus is a conversation's new status.
	StreamStatus = "status"
)

// StreamData is a stream event's payload.
type StreamData struct {
	ConversationID string             `json:"conversation_id"`
	Status         store.Status       `json:"status"`
	Message        *event.MessageData `json:"message,omitempty"`
	// WaitingSince is when the visitor asked for a person, for a conversation that waits.
	WaitingSince *time.Time `json:"waiting_since,omitempty"`
	// FirstMessage is the conversation's first visitor message, for the team's queue.
	FirstMessage string `json:"first_message,omitempty"`
}

// TeamAvailable reports whether someone of the merchant's team can answer a visitor who asks for a person: the
// team had its inbox open within presenceWindow, or a helpdesk receives the merchant's handoff requests.
func (s *Service) TeamAvailable(ctx context.Context, m *tenant.Bundle) (bool, error) {
	if len(Subscribers(m)[event.HandoffRequested]) > 0 {
		return true, nil
	}
	seen, err := s.store.TeamSeenAt(ctx, m.MerchantID)
	if err != nil {
		return false, err
	}
	return s.now().Sub(seen) < presenceWindow, nil
}

// TeamSeen records that the merchant's team has its inbox open.
func (s *Service) TeamSeen(ctx context.Context, m *tenant.Bundle) error {
	at := s.now().UTC().Truncate(time.Millisecond)
	return s.store.Write(ctx, func(tx store.Tx) error { return tx.TouchTeamPresence(ctx, m.MerchantID, at) })
}

// handOffInWords answers a visitor's message that asks for a person, in a conversation the assistant answers (or a
// new one): the message is stored with the assistant's notice in language l instead of an answer, and the
// conversation waits for the team, in one transaction.
func (s *Service) handOffInWords(ctx context.Context, m *tenant.Bundle, q Question, exists, made bool, l personLanguage) (Reply, error) {
	available, err := s.TeamAvailable(ctx, m)
	if err != nil {
		return Reply{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	notice := l.notice(available)
	ex := store.Exchange{
		MerchantID: m.MerchantID, ConversationID: q.ConversationID, NewConversation: made, ConversationExists: exists,
		VisitorID: q.VisitorID, MonthlyLimit: int(m.Plan.MonthlyConversations),
		Question: store.Message{ID: ids.New("msg_"), Role: store.RoleVisitor, Text: q.Message, CreatedAt: now, Answered: true},
		Answer:   store.Message{ID: ids.New("msg_"), Role: store.RoleAssistant, Text: notice, CreatedAt: now, Answered: true},
		Contact:  chatContact(q.Message),
		Outbox:   Route(m),
	}
	if ex.Contact != nil {
		ex.LeadID = ids.New("lead_")
	}
	var earlier []store.Message
	if exists && len(Subscribers(m)[event.HandoffRequested]) > 0 {
		if _, earlier, err = s.store.GetConversation(ctx, m.MerchantID, q.ConversationID); err != nil {
			return Reply{}, fmt.Errorf("reading the transcript of conversation %s: %w", q.ConversationID, err)
		}
	}
	transcript := slices.Concat(earlier, []store.Message{ex.Question, ex.Answer})
	res, err := recordExchange(ctx, s.store.Write, ex, func(tx store.Tx, _ bool) (int, error) {
		c := store.Conversation{ID: q.ConversationID, VisitorID: q.VisitorID, FirstMessage: q.Message, Status: store.StatusWaiting}
		return s.wait(ctx, tx, m, c, transcript, available, now)
	})
	if err != nil {
		return Reply{}, err
	}
	s.written(res.Deliveries)
	s.publish(m.MerchantID)
	return Reply{ConversationID: q.ConversationID, Message: ex.Answer, Status: store.StatusWaiting, AgentsAvailable: &available}, nil
}

// wait moves conversation c to waiting in tx and writes the events of the request: the webhook's, with the
// transcript, and the streams'. It returns the deliveries written.
func (s *Service) wait(ctx context.Context, tx store.Tx, m *tenant.Bundle, c store.Conversation, transcript []store.Message,
	available bool, at time.Time) (int, error) {
	if err := tx.SetConversationStatus(ctx, m.MerchantID, c.ID, store.StatusWaiting, at); err != nil {
		return 0, err
	}
	since := at
	data := StreamData{ConversationID: c.ID, Status: store.StatusWaiting, WaitingSince: &since, FirstMessage: c.FirstMessage}
	if err := appendStream(ctx, tx, m.MerchantID, StreamStatus, data, at); err != nil {
		return 0, err
	}
	if len(transcript) > 0 {
		notice := event.Message(transcript[len(transcript)-1])
		if err := appendStream(ctx, tx, m.MerchantID, StreamMessage, StreamData{ConversationID: c.ID,
			Status: store.StatusWaiting, Message: &notice}, at); err != nil {
			return 0, err
		}
	}
	return writeEvents(ctx, tx, m.MerchantID, Route(m), []event.Happened{event.Handoff(c, transcript, available, at)})
}

// HandoffRequest is a visitor's request for a person by the widget's button, in a conversation that exists.
type HandoffRequest struct {
	ConversationID string
	VisitorID      string
	// VisitorOnly limits the request to the visitor's own conversation, as Question.VisitorOnly does.
	VisitorOnly bool
	// Language is the visitor's language, as Question.Language; the widget's locale when empty.
	Language string
}

// RequestPerson hands a conversation the assistant answers to the merchant's team at the visitor's request: the
// assistant's notice, in the visitor's language, says whether someone is there, and the conversation waits. A
// conversation that waits already or that the team answers stays as it is; a closed one is ErrConversationClosed.
func (s *Service) RequestPerson(ctx context.Context, m *tenant.Bundle, r HandoffRequest) (Reply, error) {
	c, msgs, err := s.store.GetConversation(ctx, m.MerchantID, r.ConversationID)
	switch {
	case r.VisitorOnly && (errors.Is(err, store.ErrNotFound) || err == nil && !startedBy(c.VisitorID, r.VisitorID)):
		return Reply{}, ErrNotVisitorsConversation
	case err != nil:
		return Reply{}, fmt.Errorf("loading conversation %s: %w", r.ConversationID, err)
	}
	available, err := s.TeamAvailable(ctx, m)
	if err != nil {
		return Reply{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	notice := store.Message{ID: ids.New("msg_"), Role: store.RoleAssistant, Text: personLanguageFor(cmp.Or(r.Language, m.Widget.Locale)).notice(available),
		CreatedAt: now, Answered: true}
	var status store.Status
	deliveries := 0
	err = s.store.Write(ctx, func(tx store.Tx) error {
		cur, err := tx.ConversationForUpdate(ctx, m.MerchantID, r.ConversationID)
		if err != nil {
			return err
		}
		status, deliveries = cur.Status, 0
		switch cur.Status {
		case store.StatusClosed:
			return ErrConversationClosed
		case store.StatusWaiting, store.StatusAgent:
			return nil
		}
		if err := tx.AppendMessage(ctx, m.MerchantID, cur.ID, notice); err != nil {
			return err
		}
		status = store.StatusWaiting
		deliveries, err = s.wait(ctx, tx, m, cur, append(msgs, notice), available, now)
		return err
	})
	if err != nil {
		return Reply{}, fmt.Errorf("handing conversation %s to the team: %w", r.ConversationID, err)
	}
	s.written(deliveries)
	s.publish(m.MerchantID)
	reply := Reply{ConversationID: r.ConversationID, Status: status, Silent: true}
	if status == store.StatusWaiting {
		reply.Message, reply.AgentsAvailable, reply.Silent = notice, &available, false
	}
	return reply, nil
}

// visitorWrote stores a visitor's message in conversation c, which waits for the team or is answered by it: the
// assistant stays silent and the team's streams carry the message.
func (s *Service) visitorWrote(ctx context.Context, m *tenant.Bundle, c store.Conversation, q Question) (Reply, error) {
	msg := store.Message{ID: ids.New("msg_"), Role: store.RoleVisitor, Text: q.Message,
		CreatedAt: s.now().UTC().Truncate(time.Millisecond), Answered: true}
	status := c.Status
	err := s.store.Write(ctx, func(tx store.Tx) error {
		cur, err := tx.ConversationForUpdate(ctx, m.MerchantID, c.ID)
		if err != nil {
			return err
		}
		if status = cur.Status; status == store.StatusClosed {
			return ErrConversationClosed
		}
		// Released meanwhile, the message is stored all the same: the visitor sees it, and asks again.
		if err := tx.AppendMessage(ctx, m.MerchantID, c.ID, msg); err != nil {
			return err
		}
		data := event.Message(msg)
		return appendStream(ctx, tx, m.MerchantID, StreamMessage, StreamData{ConversationID: c.ID, Status: status, Message: &data}, msg.CreatedAt)
	})
	if err != nil {
		return Reply{}, fmt.Errorf("storing the visitor's message in conversation %s: %w", c.ID, err)
	}
	s.publish(m.MerchantID)
	return Reply{ConversationID: c.ID, Message: msg, Status: status, Silent: true}, nil
}

// CheckVisitorConversation refuses, with ErrNotVisitorsConversation, a visitor's stream of a conversation the
// visitor did not start (visitorOnly: a browser's, as Question.VisitorOnly); the merchant's own server reads any
// of its conversations, and one that does not exist is store.ErrNotFound.
func (s *Service) CheckVisitorConversation(ctx context.Context, m *tenant.Bundle, id, visitorID string, visitorOnly bool) error {
	started, err := s.store.ConversationVisitor(ctx, m.MerchantID, id)
	switch {
	case visitorOnly && (errors.Is(err, store.ErrNotFound) || err == nil && !startedBy(started, visitorID)):
		return ErrNotVisitorsConversation
	case err != nil:
		return fmt.Errorf("looking up conversation %s: %w", id, err)
	}
	return nil
}

// TeamMessage is a message of a team member into a conversation.
type TeamMessage struct {
	Text string
	// Author is the name the visitor sees the message under; may be empty.
	Author string
}

// PostTeamMessage writes a team member's message into the merchant's conversation id, which the team then answers
// (a conversation the assistant answered or that waited is taken over). A closed conversation is
// ErrConversationClosed, one that does not exist store.ErrNotFound.
func (s *Service) PostTeamMessage(ctx context.Context, m *tenant.Bundle, id string, tm TeamMessage) (store.Message, store.Conversation, error) {
	if tm.Text == "" {
		return store.Message{}, store.Conversation{}, ErrEmptyMessage
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	msg := store.Message{ID: ids.New("msg_"), Role: store.RoleAgent, Text: tm.Text, Author: tm.Author, CreatedAt: now, Answered: true}
	var (
		c          store.Conversation
		deliveries int
	)
	err := s.store.Write(ctx, func(tx store.Tx) error {
		var err error
		if c, err = tx.ConversationForUpdate(ctx, m.MerchantID, id); err != nil {
			return err
		}
		if c.Status == store.StatusClosed {
			return ErrConversationClosed
		}
		if c.Status != store.StatusAgent {
			if err := s.moved(ctx, tx, m, c.ID, store.StatusAgent, now); err != nil {
				return err
			}
		}
		if err := tx.AppendMessage(ctx, m.MerchantID, id, msg); err != nil {
			return err
		}
		data := event.Message(msg)
		if err := appendStream(ctx, tx, m.MerchantID, StreamMessage, StreamData{ConversationID: id, Status: store.StatusAgent, Message: &data}, now); err != nil {
			return err
		}
		deliveries, err = writeEvents(ctx, tx, m.MerchantID, Route(m), []event.Happened{event.AgentWrote(id, msg)})
		return err
	})
	if err != nil {
		return store.Message{}, store.Conversation{}, fmt.Errorf("writing the team's message in conversation %s: %w", id, err)
	}
	s.written(deliveries)
	s.publish(m.MerchantID)
	c.Status, c.MessageCount, c.UpdatedAt = store.StatusAgent, c.MessageCount+1, now
	if c.AgentReplyAt.IsZero() {
		c.AgentReplyAt = now
	}
	return msg, c, nil
}

// TakeOver has the team answer the merchant's conversation id from now on: the assistant falls silent.
func (s *Service) TakeOver(ctx context.Context, m *tenant.Bundle, id string) (store.Conversation, error) {
	return s.setStatus(ctx, m, id, store.StatusAgent)
}

// Release gives the merchant's conversation id back to the assistant, which answers the visitor's next message.
func (s *Service) Release(ctx context.Context, m *tenant.Bundle, id string) (store.Conversation, error) {
	return s.setStatus(ctx, m, id, store.StatusBot)
}

// Close closes the merchant's conversation id: it takes no more messages. Closing a closed conversation changes
// nothing.
func (s *Service) Close(ctx context.Context, m *tenant.Bundle, id string) (store.Conversation, error) {
	return s.setStatus(ctx, m, id, store.StatusClosed)
}

// setStatus moves the team's conversation id to status. A closed conversation moves nowhere else
// (ErrConversationClosed); a move to the status it has changes nothing and writes no event.
func (s *Service) setStatus(ctx context.Context, m *tenant.Bundle, id string, status store.Status) (store.Conversation, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	var (
		c          store.Conversation
		deliveries int
	)
	err := s.store.Write(ctx, func(tx store.Tx) error {
		var err error
		if c, err = tx.ConversationForUpdate(ctx, m.MerchantID, id); err != nil {
			return err
		}
		deliveries = 0
		switch c.Status {
		case status:
			return nil
		case store.StatusClosed:
			return ErrConversationClosed
		}
		if err := s.moved(ctx, tx, m, id, status, now); err != nil {
			return err
		}
		if status == store.StatusClosed {
			deliveries, err = writeEvents(ctx, tx, m.MerchantID, Route(m), []event.Happened{event.Closed(id, now)})
		}
		return err
	})
	if err != nil {
		return store.Conversation{}, fmt.Errorf("moving conversation %s to %s: %w", id, status, err)
	}
	s.written(deliveries)
	if c.Status != status {
		s.publish(m.MerchantID)
		c.Status = status
	}
	return c, nil
}

// moved moves a conversation to status in tx and tells the streams.
func (s *Service) moved(ctx context.Context, tx store.Tx, m *tenant.Bundle, id string, status store.Status, at time.Time) error {
	if err := tx.SetConversationStatus(ctx, m.MerchantID, id, status, at); err != nil {
		return err
	}
	return appendStream(ctx, tx, m.MerchantID, StreamStatus, StreamData{ConversationID: id, Status: status}, at)
}

// appendStream adds an event to the merchant's live-stream log in tx.
func appendStream(ctx context.Context, tx store.Tx, merchantID, typ string, data StreamData, at time.Time) error {
	payload, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encoding stream event %s: %w", typ, err)
	}
	_, err = tx.AppendStreamEvent(ctx, merchantID, store.StreamEvent{ConversationID: data.ConversationID, Type: typ,
		Payload: payload, CreatedAt: at})
	return err
}

// publish wakes the merchant's live streams, on this replica and, through the notifier, on the others.
func (s *Service) publish(merchantID string) {
	if s.published != nil {
		s.published(merchantID)
	}
}

// notice is what a visitor who asked for a person is told.
func (l personLanguage) notice(available bool) string {
	if available {
		return l.waiting
	}
	return l.nobody
}
