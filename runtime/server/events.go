package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/parley-dev/parley/runtime/live"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The bounds of the live streams a replica holds open, in all and per merchant: an idle stream costs a goroutine
// and a few buffers, and the bounds keep one merchant's page from taking the replica's.
const (
	DefaultMaxStreams            = 10000
	DefaultMaxStreamsPerMerchant = 2000
)

// defaultStreamPoll is how often a stream reads the store for events another replica wrote; a write on this
// replica wakes it at once. heartbeatEvery keeps proxies from closing an idle stream.
const (
	defaultStreamPoll = 2 * time.Second
	heartbeatEvery    = 15 * time.Second
	streamBatch       = 100
)

// conversationEvents streams the events of one conversation to its visitor (publishable key and the visitor's
// X-Visitor-ID: only a conversation that visitor started) or to the merchant's server (secret key): the team's
// messages and the conversation's status changes, from the start of the conversation or after Last-Event-ID.
func (s *Server) conversationEvents(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id, err := conversationPath(r)
	if err != nil {
		return err
	}
	visitor, err := visitorID(r)
	if err != nil {
		return err
	}
	c, ok := callerOf(r)
	if err := s.chat.CheckVisitorConversation(r.Context(), m, id, visitor, ok && c.key.Type == tenant.KeyPublishable); err != nil {
		return explain(err, store.ErrNotFound, "no such conversation")
	}
	return s.streamEvents(w, r, m, id, 0)
}

// teamEvents streams every event of the merchant's conversations handed to the team, for the inbox: new waiting
// conversations, the visitors' and the team's messages, status changes; from now, or after Last-Event-ID.
func (s *Server) teamEvents(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	head, err := s.store.StreamHead(r.Context(), m.MerchantID)
	if err != nil {
		return err
	}
	if err := s.chat.TeamSeen(r.Context(), m); err != nil {
		return err
	}
	return s.streamEvents(w, r, m, "", head)
}

// streamEvents sends the merchant's stream events (one conversation's when conversationID is set) as server-sent
// events, each with its number as its id, starting after Last-Event-ID or else after from. It reads them from the
// store whenever the hub wakes it or its poll comes, so an event written on another replica arrives within a
// poll and a stream resumed on any replica misses nothing. The team's stream keeps the team marked as there.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, conversationID string, from int64) error {
	after := from
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return newError(http.StatusBadRequest, codeInvalidRequest, "Last-Event-ID must be the id of an event this stream sent, not %q", v)
		}
		after = n
	}
	// once answers what there is and ends: polling, for a client behind a proxy that buffers streams.
	once := r.URL.Query().Get("once") == "1"
	wake, done, err := s.live.Subscribe(m.MerchantID)
	if errors.Is(err, live.ErrTooManyStreams) {
		return &explained{err: errTooManyStreams, retryAfter: 30 * time.Second,
			message: "this runtime holds as many live streams as it may; retry later, or poll the conversation"}
	}
	if err != nil {
		return err
	}
	defer done()
	h := w.Header()
	h.Set("Content-Type", contentTypeEventStream)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if _, err := fmt.Fprint(w, "retry: 3000\n\n"); err != nil {
		return nil
	}
	poll, heartbeat := time.NewTicker(s.streamPoll), time.NewTicker(heartbeatEvery)
	defer poll.Stop()
	defer heartbeat.Stop()
	ctx := r.Context()
	for {
		for {
			events, err := s.store.StreamEvents(ctx, m.MerchantID, store.StreamFilter{After: after, ConversationID: conversationID, Limit: streamBatch})
			if err != nil {
				if ctx.Err() == nil {
					logger(r).Warn("reading stream events failed", "error", err)
				}
				break // the next poll tries again
			}
			for _, e := range events {
				if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, e.Payload); err != nil {
					return nil
				}
				after = e.Seq
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
			if len(events) < streamBatch {
				break
			}
		}
		if once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-poll.C:
		case <-heartbeat.C:
			if conversationID == "" {
				if err := s.chat.TeamSeen(ctx, m); err != nil && ctx.Err() == nil {
					logger(r).Warn("recording the team's presence failed", "error", err)
				}
			}
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return nil
			}
		}
	}
}

// errTooManyStreams refuses a live stream past the replica's or the merchant's bound.
var errTooManyStreams = live.ErrTooManyStreams
