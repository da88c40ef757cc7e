package server

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
)

const contentTypeEventStream = "text/event-stream"

// The events of a streamed answer.
const (
	eventDelta   = "delta"
	eventSources = "sources"
	eventEnd     = "end"
	eventError   = "error"
)

// wantsEventStream reports whether the client asked for the answer as server-sent events.
func wantsEventStream(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == contentTypeEventStream {
			return true
		}
	}
	return false
}

// answerStream answers as server-sent events: delta events with the answer's text as the model writes it, then
// one sources event with the stored reply (its whole text, sources and ids, the same object as the JSON answer),
// then end. An error before the first event is the usual JSON error; after it, an error event with the error
// envelope. When the visitor goes away mid-stream, the model's request is closed with the visitor's: nobody reads
// the rest, and a page that opens and drops streams would otherwise spend the merchant's tokens on answers no one
// sees. The question is stored with the part of its answer written (chat.Service.Answer).
func (s *Server) answerStream(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, q chat.Question) error {
	es := &eventStream{w: w, rc: http.NewResponseController(w)}
	q.Delta = func(piece string) { es.send(eventDelta, deltaJSON{Text: piece}) }
	reply, err := s.chat.Answer(r.Context(), m, q)
	if err != nil {
		err = s.chatError(m, err)
		if !es.started {
			return err
		}
		if r.Context().Err() != nil {
			return nil // the visitor is gone: nobody reads an error event
		}
		ae := answer(w, err)
		if ae == nil {
			logger(r).Error("streamed answer failed", "error", err)
			ae = internalError()
		}
		es.send(eventError, errorBody{Error: errorDetail{Code: ae.code, Message: ae.message, RequestID: requestID(r)}})
		return nil
	}
	s.counted(m, reply)
	if !es.started && reply.Message.Text != "" && !reply.Silent {
		es.send(eventDelta, deltaJSON{Text: reply.Message.Text}) // an offline answer comes whole
	}
	es.send(eventSources, replyJSON(reply))
	es.send(eventEnd, struct{}{})
	return nil
}

type deltaJSON struct {
	Text string `json:"text"`
}

// eventStream writes server-sent events, starting the response with the first.
type eventStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	// gone is set once a write failed: the visitor went away, and the rest is not sent.
	gone bool
}

func (es *eventStream) send(event string, v any) {
	if es.gone {
		return
	}
	if !es.started {
		h := es.w.Header()
		h.Set("Content-Type", contentTypeEventStream)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no") // nginx ingress would otherwise hold the events back
		es.w.WriteHeader(http.StatusOK)
		es.started = true
	}
	data, err := json.Marshal(v)
	if err == nil {
		_, err = fmt.Fprintf(es.w, "event: %s\ndata: %s\n\n", event, data)
	}
	if err == nil {
		err = es.rc.Flush()
	}
	es.gone = err != nil
}
