package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxSubjectBody bounds a data subject's request: three short strings.
const maxSubjectBody = 4 << 10

// exportRetryAfter is what a caller refused an export (chat.ErrTooManyExports) is told to wait.
const exportRetryAfter = 10 * time.Second

// subjectRequest names a data subject: at least one of the three.
type subjectRequest struct {
	VisitorID string `json:"visitor_id"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
}

// subject reads and checks a data subject's request.
func subject(w http.ResponseWriter, r *http.Request) (store.Subject, error) {
	var req subjectRequest
	if err := decodeJSON(w, r, maxSubjectBody, &req); err != nil {
		return store.Subject{}, err
	}
	s, err := chat.ParseSubject(req.VisitorID, req.Email, req.Phone)
	if se := (*chat.SubjectError)(nil); errors.As(err, &se) {
		return store.Subject{}, newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", se.Error())
	}
	if errors.Is(err, chat.ErrNoSubject) {
		return store.Subject{}, newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", err.Error())
	}
	return s, err
}

type subjectExportJSON struct {
	ExportedAt time.Time `json:"exported_at"`
	MerchantID string    `json:"merchant_id"`
}

type subjectConversationJSON struct {
	conversationJSON
	Messages []messageJSON `json:"messages"`
	// Satisfaction is the visitor's rating of the conversation, absent when it has none.
	Satisfaction *conversationRatingJSON `json:"satisfaction,omitempty"`
}

// exportSubject answers everything the merchant holds about a data subject as one JSON document, written as the
// store reads it, one conversation at a time: {"exported_at", "merchant_id", "conversations": [...], "leads":
// [...]}. A failure once the document has started cuts it short, which a JSON parser refuses.
func (s *Server) exportSubject(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	subj, err := subject(w, r)
	if err != nil {
		return err
	}
	head, err := json.Marshal(subjectExportJSON{ExportedAt: s.now().UTC().Truncate(time.Millisecond), MerchantID: m.MerchantID})
	if err != nil {
		return err
	}
	out := &jsonStream{w: w}
	started := false
	start := func() {
		if started {
			return
		}
		started = true
		w.Header().Set("Content-Type", contentTypeJSON)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		out.raw(head[:len(head)-1])
		out.raw([]byte(`,"conversations":[`))
	}
	leads := false
	err = s.chat.ExportSubject(r.Context(), m, subj, chat.SubjectExport{
		Conversation: func(c store.Conversation, msgs []store.Message, ratings []store.Rating, sat *store.Satisfaction) error {
			start()
			conv := subjectConversationJSON{conversationJSON: toConversationJSON(c), Messages: make([]messageJSON, len(msgs))}
			feedback := ratingsJSON(ratings)
			for i, msg := range msgs {
				conv.Messages[i] = toMessageJSON(msg)
				conv.Messages[i].Feedback = feedback[msg.ID]
			}
			if sat != nil {
				conv.Satisfaction = &conversationRatingJSON{Score: sat.Score, Comment: sat.Comment, UpdatedAt: sat.UpdatedAt.UTC()}
			}
			return out.item(conv)
		},
		Lead: func(l store.Lead) error {
			start()
			if !leads {
				leads = true
				out.end(`],"leads":[`)
			}
			return out.item(toLeadJSON(l))
		},
	})
	if errors.Is(err, chat.ErrTooManyExports) && !started {
		return &explained{err: err, message: "this merchant runs as many exports as it may at once; retry shortly",
			retryAfter: exportRetryAfter}
	}
	if err != nil {
		if started {
			// The status is sent: the document ends unclosed, and the error is the log's.
			logger(r).Error("exporting a data subject's records", "error", err)
			return nil
		}
		return err
	}
	start()
	if !leads {
		out.end(`],"leads":[`)
	}
	out.end("]}\n")
	return out.err
}

// jsonStream writes the items of JSON arrays one by one, each separated from the last of its array by a comma.
type jsonStream struct {
	w     http.ResponseWriter
	first bool
	err   error
}

func (j *jsonStream) raw(b []byte) {
	if j.err == nil {
		_, j.err = j.w.Write(b)
	}
	j.first = true
}

// end closes the current array with what follows it, and starts the next.
func (j *jsonStream) end(s string) { j.raw([]byte(s)) }

func (j *jsonStream) item(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !j.first && j.err == nil {
		_, j.err = j.w.Write([]byte{','})
	}
	if j.err == nil {
		_, j.err = j.w.Write(b)
	}
	j.first = false
	return j.err
}

type erasureJSON struct {
	ID            string `json:"id"`
	Conversations int    `json:"conversations"`
	Messages      int    `json:"messages"`
	Leads         int    `json:"leads"`
}

// eraseSubject erases everything the merchant holds about a data subject and answers the counts.
func (s *Server) eraseSubject(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	subj, err := subject(w, r)
	if err != nil {
		return err
	}
	e, err := s.chat.EraseSubject(r.Context(), m, subj)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, erasureJSON{ID: e.ID, Conversations: e.Conversations, Messages: e.Messages, Leads: e.Leads})
	return nil
}
