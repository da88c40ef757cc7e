package chat_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
	"github.com/parley-dev/parley/runtime/tenant"
)

// handoff checks the statements of a conversation handed to the merchant's team, as package chat combines them:
// every status change, the refused ones, the messages stored while the assistant is silent, the live-stream log,
// the webhook events and the analytics, and that no merchant reaches another's.
func (h harness) handoff(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	now := storetest.Base
	svc, err := chat.New(chat.Config{Store: s, Responder: assistant.Retrieval{}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	acme := &tenant.Bundle{MerchantID: "acme", DisplayName: "Acme", Plan: tenant.Plan{Webhooks: true},
		Webhooks: []tenant.Webhook{{ID: "desk", URL: "https://desk.example/hook", Events: []tenant.Event{
			tenant.EventConversationHandoffRequested, tenant.EventConversationAgentMessage, tenant.EventConversationClosed}}}}
	other := &tenant.Bundle{MerchantID: "other", DisplayName: "Other"}

	r, err := svc.Answer(ctx, acme, chat.Question{Message: "Do you ship to Norway?", VisitorID: "v1"})
	if err != nil || r.Status != store.StatusBot || r.Silent {
		t.Fatalf("first message: %+v, %v; want the assistant's answer in status bot", r, err)
	}
	id := r.ConversationID
	now = now.Add(time.Minute)
	r, err = svc.Answer(ctx, acme, chat.Question{Message: "Can I talk to a human?", ConversationID: id, VisitorID: "v1", VisitorOnly: true})
	if err != nil || r.Status != store.StatusWaiting || r.AgentsAvailable == nil || !*r.AgentsAvailable || r.Message.Role != store.RoleAssistant {
		t.Fatalf("asking for a person: %+v, %v; want the notice, waiting, someone available (a helpdesk)", r, err)
	}
	c, msgs := storetest.GetConversation(t, s, "acme", id)
	if c.Status != store.StatusWaiting || !c.HandoffAt.Equal(storetest.Millis(now)) || len(msgs) != 4 {
		t.Fatalf("after the request: %+v with %d messages; want waiting since %v with 4", c, len(msgs), now)
	}
	if waiting := storetest.ListAllConversations(t, s, "acme", store.ConversationFilter{Status: store.StatusWaiting}); len(waiting) != 1 || waiting[0].ID != id {
		t.Errorf("the queue of waiting conversations = %v, want [%s]", storetest.ConversationIDs(waiting), id)
	}
	if bots := storetest.ListAllConversations(t, s, "acme", store.ConversationFilter{Status: store.StatusBot}); len(bots) != 0 {
		t.Errorf("conversations in status bot = %v, want none", storetest.ConversationIDs(bots))
	}
	handoff := deliveryOf(t, s, "acme", event.HandoffRequested)
	var payload struct {
		Data struct {
			Status     string `json:"status"`
			Transcript []struct {
				Role, Text string
			} `json:"transcript"`
		} `json:"data"`
	}
	if err := json.Unmarshal(handoff.Payload, &payload); err != nil || payload.Data.Status != "waiting" || len(payload.Data.Transcript) != 4 ||
		payload.Data.Transcript[2].Text != "Can I talk to a human?" {
		t.Errorf("conversation.handoff_requested payload %s (%v): want status waiting and the 4 messages", handoff.Payload, err)
	}

	// Waiting, the assistant is silent and the visitor's messages are stored.
	now = now.Add(time.Minute)
	r, err = svc.Answer(ctx, acme, chat.Question{Message: "Hello? Do you ship to Norway?", ConversationID: id, VisitorID: "v1", VisitorOnly: true})
	if err != nil || !r.Silent || r.Status != store.StatusWaiting || r.Message.Role != store.RoleVisitor {
		t.Fatalf("a message while waiting: %+v, %v; want it stored, silent", r, err)
	}
	// Another visitor and another merchant reach nothing.
	_, err = svc.RequestPerson(ctx, acme, chat.HandoffRequest{ConversationID: id, VisitorID: "v2", VisitorOnly: true})
	storetest.WantErr(t, "another visitor asking for a person in the conversation", err, chat.ErrNotVisitorsConversation)
	_, err = svc.TakeOver(ctx, other, id)
	storetest.WantErr(t, "another merchant taking the conversation over", err, store.ErrNotFound)
	_, _, err = svc.PostTeamMessage(ctx, other, id, chat.TeamMessage{Text: "hi"})
	storetest.WantErr(t, "another merchant writing in the conversation", err, store.ErrNotFound)
	if events, err := s.StreamEvents(ctx, "other", store.StreamFilter{}); err != nil || len(events) != 0 {
		t.Errorf("another merchant's stream events: %v, %v; want none", events, err)
	}

	// The team answers: the conversation is theirs.
	now = now.Add(90 * time.Second)
	msg, c, err := svc.PostTeamMessage(ctx, acme, id, chat.TeamMessage{Text: "Hi, Anna here. Yes, in 5 days.", Author: "Anna"})
	if err != nil || c.Status != store.StatusAgent || msg.Role != store.RoleAgent {
		t.Fatalf("the team's message: %+v in %+v, %v", msg, c, err)
	}
	c, msgs = storetest.GetConversation(t, s, "acme", id)
	last := msgs[len(msgs)-1]
	if c.Status != store.StatusAgent || !c.AgentReplyAt.Equal(storetest.Millis(now)) || len(msgs) != 6 || last.Author != "Anna" || last.Role != store.RoleAgent {
		t.Fatalf("after the team's message: %+v, last message %+v of %d", c, last, len(msgs))
	}
	deliveryOf(t, s, "acme", event.AgentMessage)
	r, err = svc.Answer(ctx, acme, chat.Question{Message: "Great, thanks!", ConversationID: id, VisitorID: "v1", VisitorOnly: true})
	if err != nil || !r.Silent || r.Status != store.StatusAgent {
		t.Fatalf("a message to the team: %+v, %v; want it stored, silent", r, err)
	}

	// Released, the assistant answers again.
	if c, err = svc.Release(ctx, acme, id); err != nil || c.Status != store.StatusBot {
		t.Fatalf("release: %+v, %v", c, err)
	}
	r, err = svc.Answer(ctx, acme, chat.Question{Message: "What about Sweden?", ConversationID: id, VisitorID: "v1", VisitorOnly: true})
	if err != nil || r.Silent || r.Status != store.StatusBot || r.Message.Role != store.RoleAssistant {
		t.Fatalf("a message after the release: %+v, %v; want the assistant's answer", r, err)
	}

	// Closed, nothing moves it and nothing is written into it.
	if c, err = svc.Close(ctx, acme, id); err != nil || c.Status != store.StatusClosed {
		t.Fatalf("close: %+v, %v", c, err)
	}
	deliveryOf(t, s, "acme", event.ConversationClosed)
	if c, err = svc.Close(ctx, acme, id); err != nil || c.Status != store.StatusClosed {
		t.Errorf("closing again: %+v, %v; want no change", c, err)
	}
	_, err = svc.Answer(ctx, acme, chat.Question{Message: "Hello?", ConversationID: id, VisitorID: "v1", VisitorOnly: true})
	storetest.WantErr(t, "a visitor's message into a closed conversation", err, chat.ErrConversationClosed)
	_, _, err = svc.PostTeamMessage(ctx, acme, id, chat.TeamMessage{Text: "Still there?"})
	storetest.WantErr(t, "the team's message into a closed conversation", err, chat.ErrConversationClosed)
	_, err = svc.Release(ctx, acme, id)
	storetest.WantErr(t, "releasing a closed conversation", err, chat.ErrConversationClosed)
	_, err = svc.TakeOver(ctx, acme, id)
	storetest.WantErr(t, "taking a closed conversation over", err, chat.ErrConversationClosed)
	_, err = svc.RequestPerson(ctx, acme, chat.HandoffRequest{ConversationID: id, VisitorID: "v1", VisitorOnly: true})
	storetest.WantErr(t, "asking for a person in a closed conversation", err, chat.ErrConversationClosed)
	if _, msgs = storetest.GetConversation(t, s, "acme", id); len(msgs) != 9 {
		t.Errorf("the closed conversation has %d messages, want 9", len(msgs))
	}

	// The live-stream log: numbered from 1 without gaps, one conversation's readable alone.
	events, err := s.StreamEvents(ctx, "acme", store.StreamFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.ConversationID != id {
			t.Errorf("stream event %d: %+v", i, e)
		}
	}
	types := make([]string, len(events))
	for i, e := range events {
		types[i] = e.Type
	}
	// waiting, its notice, the visitor's message, agent, the team's message, the visitor's, bot, closed.
	want := []string{"status", "message", "message", "status", "message", "message", "status", "status"}
	storetest.CheckIDs(t, "stream event types", types, want)
	head, err := s.StreamHead(ctx, "acme")
	if err != nil || head != int64(len(events)) {
		t.Errorf("StreamHead = %d, %v; want %d", head, err, len(events))
	}
	after, err := s.StreamEvents(ctx, "acme", store.StreamFilter{After: 3, ConversationID: id, Limit: 2})
	if err != nil || len(after) != 2 || after[0].Seq != 4 {
		t.Errorf("two events after 3: %+v, %v", after, err)
	}
	if none, err := s.StreamEvents(ctx, "acme", store.StreamFilter{ConversationID: "conv_other"}); err != nil || len(none) != 0 {
		t.Errorf("another conversation's events: %+v, %v", none, err)
	}

	// A visitor's button in a conversation of a merchant without a helpdesk: nobody there until the inbox opens.
	r, err = svc.Answer(ctx, other, chat.Question{Message: "Do you ship to Norway?", VisitorID: "v3"})
	if err != nil {
		t.Fatal(err)
	}
	r, err = svc.RequestPerson(ctx, other, chat.HandoffRequest{ConversationID: r.ConversationID, VisitorID: "v3", VisitorOnly: true})
	if err != nil || r.Status != store.StatusWaiting || r.AgentsAvailable == nil || *r.AgentsAvailable {
		t.Fatalf("the button with nobody there: %+v, %v; want waiting, nobody available", r, err)
	}
	if err := svc.TeamSeen(ctx, other); err != nil {
		t.Fatal(err)
	}
	if ok, err := svc.TeamAvailable(ctx, other); err != nil || !ok {
		t.Errorf("TeamAvailable after the inbox opened = %v, %v", ok, err)
	}
	if ok, err := svc.TeamAvailable(ctx, &tenant.Bundle{MerchantID: "third"}); err != nil || ok {
		t.Errorf("TeamAvailable of a merchant whose team never came = %v, %v", ok, err)
	}

	o, err := s.Overview(ctx, "acme", storetest.Base.Add(-time.Hour), storetest.Base.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if o.Handoffs != 1 || o.HumanReplies != 1 || o.HumanReplyTime != 150*time.Second || o.ResolvedByBot != 0 ||
		len(o.Daily) != 1 || o.Daily[0].Handoffs != 1 {
		t.Errorf("overview: handoffs %d, human replies %d in %v, resolved by the bot %d, daily %+v",
			o.Handoffs, o.HumanReplies, o.HumanReplyTime, o.ResolvedByBot, o.Daily)
	}
}

// deliveryOf returns the merchant's one delivery of an event type.
func deliveryOf(t *testing.T, s store.Store, merchantID, eventType string) store.Delivery {
	t.Helper()
	list, _, err := s.ListDeliveries(t.Context(), merchantID, store.DeliveryFilter{EventType: eventType})
	if err != nil || len(list) != 1 {
		t.Fatalf("deliveries of %s: %d, %v; want 1", eventType, len(list), err)
	}
	return list[0]
}
