package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/transcript"
)

const maxFixBody = 64 << 10

type reviewGroupJSON struct {
	Question       string         `json:"question"`
	Questions      []questionJSON `json:"questions"`
	Asked          int            `json:"asked"`
	Unanswered     int            `json:"unanswered"`
	ThumbsDown     int            `json:"thumbs_down"`
	LowConfidence  int            `json:"low_confidence"`
	Answer         string         `json:"answer"`
	Answered       bool           `json:"answered"`
	Confidence     float64        `json:"confidence"`
	Sources        []sourceJSON   `json:"sources"`
	Comments       []string       `json:"comments"`
	ConversationID string         `json:"conversation_id"`
	LastAskedAt    time.Time      `json:"last_asked_at"`
}

type fixRequest struct {
	Questions   []string `json:"questions"`
	KnowledgeID string   `json:"knowledge_id"`
	List        string   `json:"list_question"`
	// Knowledge is a new item written for the group, a drafted answer edited: added, and the group dealt with
	// by it, in one request.
	Knowledge *knowledgeInput `json:"knowledge"`
}

// review answers the merchant's review queue, in JSON or, with format=csv, as a CSV file.
func (s *Server) review(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "csv" {
		return newError(http.StatusBadRequest, codeInvalidRequest, "format must be json or csv")
	}
	groups, err := s.chat.Review(r.Context(), m)
	if err != nil {
		return err
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="review-queue.csv"`)
		return transcript.ReviewCSV(w, groups)
	}
	out := make([]reviewGroupJSON, len(groups))
	for i, g := range groups {
		out[i] = reviewGroupJSON{Question: g.Question, Questions: questions(g.Questions), Asked: g.Asked,
			Unanswered: g.Unanswered, ThumbsDown: g.ThumbsDown, LowConfidence: g.LowConfidence, Answer: g.Latest.Answer,
			Answered: g.Latest.Answered, Confidence: g.Latest.Confidence,
			Sources: sourcesJSON(g.Latest.Sources), Comments: append([]string{}, g.Comments...),
			ConversationID: g.Latest.ConversationID, LastAskedAt: g.Latest.CreatedAt.UTC()}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

// fixReview deals with a group of the review queue: adds the item written for it, lists its question under an
// item, or records that the merchant dealt with it otherwise.
func (s *Server) fixReview(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var req fixRequest
	if err := decodeJSON(w, r, maxFixBody, &req); err != nil {
		return err
	}
	f := chat.Fix{Questions: req.Questions, KnowledgeID: req.KnowledgeID, List: req.List}
	if req.Knowledge != nil {
		k, err := validKnowledge(*req.Knowledge)
		if err != nil {
			return err
		}
		f.New = &k
	}
	item, err := s.chat.RecordFix(r.Context(), m, f)
	if errors.Is(err, chat.ErrInvalidFix) {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", strings.TrimPrefix(err.Error(), chat.ErrInvalidFix.Error()+": "))
	}
	if err != nil {
		return knowledgeLimit(explain(err, store.ErrNotFound, "no such knowledge item"), m)
	}
	out := map[string]any{"questions": req.Questions}
	if item.ID != "" {
		out["knowledge"] = toKnowledgeJSON(item)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type draftRequest struct {
	Questions []string `json:"questions"`
}

type draftJSON struct {
	Title     string       `json:"title"`
	Content   string       `json:"content"`
	Questions []string     `json:"questions"`
	Sources   []sourceJSON `json:"sources"`
}

// draftReview answers the article the merchant's model drafted for a group of the review queue. Nothing is
// stored: the merchant saves it, edited, as a knowledge item.
func (s *Server) draftReview(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var req draftRequest
	if err := decodeJSON(w, r, maxFixBody, &req); err != nil {
		return err
	}
	d, err := s.chat.DraftAnswer(r.Context(), m, req.Questions)
	if errors.Is(err, chat.ErrInvalidFix) {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", strings.TrimPrefix(err.Error(), chat.ErrInvalidFix.Error()+": "))
	}
	if err != nil {
		return explain(err, store.ErrNotFound, "no review group asks those questions")
	}
	writeJSON(w, http.StatusOK, draftJSON{Title: d.Title, Content: d.Content, Questions: d.Questions, Sources: sourcesJSON(d.Sources)})
	return nil
}

type weekJSON struct {
	Start      string `json:"week_start"`
	Answered   int    `json:"answered"`
	Unanswered int    `json:"unanswered"`
	Rated      int    `json:"rated"`
	ThumbsDown int    `json:"thumbs_down"`
	Surveys    int    `json:"surveys"`
	Satisfied  int    `json:"satisfied"`
}

type fixResultJSON struct {
	Question    string    `json:"question"`
	KnowledgeID string    `json:"knowledge_id,omitempty"`
	FixedAt     time.Time `json:"fixed_at"`
	Asked       int       `json:"asked_since"`
	Answered    int       `json:"answered_since"`
}

// feedbackAnalytics answers whether the answers get better: the weeks' answers and ratings, and the fixes' results.
func (s *Server) feedbackAnalytics(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	weeks := 8
	if v := q.Get("weeks"); v != "" {
		if weeks, err = strconv.Atoi(v); err != nil || weeks < 1 || weeks > chat.MaxProgressWeeks {
			return newError(http.StatusBadRequest, codeInvalidRequest, "weeks must be 1 to %d", chat.MaxProgressWeeks)
		}
	}
	p, err := s.chat.Progress(r.Context(), m, weeks)
	if err != nil {
		return err
	}
	out := struct {
		Weeks []weekJSON      `json:"weeks"`
		Fixes []fixResultJSON `json:"fixes"`
	}{Weeks: make([]weekJSON, len(p.Weeks)), Fixes: make([]fixResultJSON, len(p.Fixes))}
	for i, wk := range p.Weeks {
		out.Weeks[i] = weekJSON{Start: wk.Start.Format(time.DateOnly), Answered: wk.Answered, Unanswered: wk.Unanswered,
			Rated: wk.Rated, ThumbsDown: wk.ThumbsDown, Surveys: wk.Surveys, Satisfied: wk.Satisfied}
	}
	for i, f := range p.Fixes {
		out.Fixes[i] = fixResultJSON{Question: f.Question, KnowledgeID: f.KnowledgeID, FixedAt: f.FixedAt.UTC(), Asked: f.Asked, Answered: f.Answered}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
