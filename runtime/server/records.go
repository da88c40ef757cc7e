package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/input"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	maxKnowledgeBody   = 256 << 10
	maxQueryRunes      = 200
	defaultRangeDays   = 30
	maxPageSize        = 100
	maxKnowledgeIDSize = 64
)

type conversationJSON struct {
	ID              string       `json:"id"`
	CreatedAt       time.Time    `json:"created_at"`
	UpdatedAt       time.Time    `json:"updated_at"`
	MessageCount    int          `json:"message_count"`
	FirstMessage    string       `json:"first_message"`
	Answered        bool         `json:"answered"`
	UnansweredCount int          `json:"unanswered_count"`
	HasLead         bool         `json:"has_lead"`
	VisitorID       string       `json:"visitor_id,omitempty"`
	Status          store.Status `json:"status"`
	// WaitingSince is when the visitor asked for a person, while the conversation waits.
	WaitingSince *time.Time `json:"waiting_since,omitempty"`
}

type messageJSON struct {
	ID        string       `json:"id"`
	Role      store.Role   `json:"role"`
	Text      string       `json:"text"`
	Sources   []sourceJSON `json:"sources"`
	Answered  bool         `json:"answered"`
	Author    string       `json:"author,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
	// Feedback is the visitor's rating of an assistant message, absent when it has none.
	Feedback *ratingJSON `json:"feedback,omitempty"`
}

type conversationDetailJSON struct {
	conversationJSON
	Messages []messageJSON `json:"messages"`
	// Leads are the contact details captured in the conversation.
	Leads []leadJSON `json:"leads"`
	// Satisfaction is the visitor's rating of the conversation, null when it has none.
	Satisfaction *conversationRatingJSON `json:"satisfaction"`
}

type page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
}

func newPage[T any](data []T, next string) page[T] {
	p := page[T]{Data: data}
	if next != "" {
		p.NextCursor = &next
	}
	if p.Data == nil {
		p.Data = []T{}
	}
	return p
}

func toConversationJSON(c store.Conversation) conversationJSON {
	out := conversationJSON{
		ID: c.ID, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), MessageCount: c.MessageCount,
		FirstMessage: c.FirstMessage, Answered: c.Unanswered == 0, UnansweredCount: c.Unanswered,
		HasLead: c.HasLead, VisitorID: c.VisitorID, Status: c.Status,
	}
	if c.Status == store.StatusWaiting && !c.HandoffAt.IsZero() {
		since := c.HandoffAt.UTC()
		out.WaitingSince = &since
	}
	return out
}

func toMessageJSON(msg store.Message) messageJSON {
	return messageJSON{ID: msg.ID, Role: msg.Role, Text: msg.Text, Sources: sourcesJSON(msg.Sources),
		Answered: msg.Answered, Author: msg.Author, CreatedAt: msg.CreatedAt.UTC()}
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	f := store.ConversationFilter{}
	if f.Limit, f.Cursor, err = pageParams(q); err != nil {
		return err
	}
	if f.From, f.To, err = timeRange(q); err != nil {
		return err
	}
	if f.Query, err = textParam(q, "q"); err != nil {
		return err
	}
	if v := q.Get("has_lead"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return newError(http.StatusBadRequest, codeInvalidRequest, "has_lead must be true or false, not %q", v)
		}
		f.HasLead = &b
	}
	if v := q.Get("status"); v != "" {
		if f.Status, err = parseStatus(v); err != nil {
			return err
		}
	}
	if f.Status == store.StatusWaiting {
		// The team looks at its queue: someone is there to answer the next visitor who asks.
		if err := s.chat.TeamSeen(r.Context(), m); err != nil {
			return err
		}
	}
	convs, next, err := s.store.ListConversations(r.Context(), m.MerchantID, f)
	if err != nil {
		return err
	}
	out := make([]conversationJSON, len(convs))
	for i, c := range convs {
		out[i] = toConversationJSON(c)
	}
	writeJSON(w, http.StatusOK, newPage(out, next))
	return nil
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id := r.PathValue("id")
	if !conversationIDPattern.MatchString(id) {
		return notFound("conversation")
	}
	c, msgs, err := s.store.GetConversation(r.Context(), m.MerchantID, id)
	if err != nil {
		return explain(err, store.ErrNotFound, "no such conversation")
	}
	leads, _, err := s.store.ListLeads(r.Context(), m.MerchantID, store.LeadFilter{ConversationID: id, Limit: maxPageSize})
	if err != nil {
		return err
	}
	ratings, sat, err := s.store.ConversationRatings(r.Context(), m.MerchantID, id)
	if err != nil {
		return err
	}
	out := conversationDetailJSON{conversationJSON: toConversationJSON(c), Messages: make([]messageJSON, len(msgs)),
		Leads: leadsJSON(leads)}
	if sat != nil {
		out.Satisfaction = &conversationRatingJSON{Score: sat.Score, Comment: sat.Comment, UpdatedAt: sat.UpdatedAt.UTC()}
	}
	feedback := ratingsJSON(ratings)
	for i, msg := range msgs {
		out.Messages[i] = toMessageJSON(msg)
		if msg.Role == store.RoleAssistant {
			out.Messages[i].Feedback = feedback[msg.ID]
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type knowledgeInput struct {
	Title     *string  `json:"title"`
	Content   *string  `json:"content"`
	URL       string   `json:"url"`
	Tags      []string `json:"tags"`
	Questions []string `json:"questions"`
	Status    string   `json:"status"`
	Curated   bool     `json:"curated"`
}

type knowledgeJSON struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	URL       string    `json:"url,omitempty"`
	Tags      []string  `json:"tags"`
	Questions []string  `json:"questions"`
	Status    string    `json:"status"`
	Curated   bool      `json:"curated"`
	SourceID  string    `json:"source_id,omitempty"`
	UseCount  int       `json:"use_count"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func toKnowledgeJSON(k store.Knowledge) knowledgeJSON {
	return knowledgeJSON{ID: k.ID, Title: k.Title, Content: k.Content, URL: k.URL, Tags: orEmpty(k.Tags),
		Questions: orEmpty(k.Questions), Status: chat.StatusOf(k), Curated: k.Curated, SourceID: k.SourceID, UseCount: k.UseCount, CreatedAt: k.CreatedAt.UTC(),
		UpdatedAt: k.UpdatedAt.UTC()}
}

// orEmpty returns list, or an empty list for nil: the API writes a list it has none of as [].
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// readKnowledge decodes a knowledge item body and validates it with chat's rules, in the API's words.
func readKnowledge(w http.ResponseWriter, r *http.Request) (store.Knowledge, error) {
	var in knowledgeInput
	if err := decodeJSON(w, r, maxKnowledgeBody, &in); err != nil {
		return store.Knowledge{}, err
	}
	return validKnowledge(in)
}

// validKnowledge validates a decoded knowledge item with chat's rules, in the API's words.
func validKnowledge(in knowledgeInput) (store.Knowledge, error) {
	k, problems := chat.KnowledgeInput{Title: deref(in.Title), Content: deref(in.Content), URL: in.URL, Tags: in.Tags,
		Questions: in.Questions, Status: in.Status, Curated: in.Curated}.Validate()
	if problems != nil {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = knowledgeProblem(p)
		}
		return store.Knowledge{}, newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", strings.Join(msgs, "; "))
	}
	return k, nil
}

// knowledgeProblem words a knowledge item's problem for an API client, naming the JSON field.
func knowledgeProblem(p chat.FieldError) string {
	name := p.Field
	if p.Index >= 0 {
		name = fmt.Sprintf("%s[%d]", p.Field, p.Index)
	}
	switch p.Problem {
	case chat.ProblemMissing:
		return name + " is required and must not be blank"
	case chat.ProblemTooLong:
		unit := "characters"
		if p.Field == chat.FieldURL {
			unit = "bytes"
		}
		return fmt.Sprintf("%s is %d %s long; at most %d are allowed", name, p.Length, unit, p.Limit)
	case chat.ProblemTooMany:
		return fmt.Sprintf("%s has %d entries; at most %d are allowed", name, p.Length, p.Limit)
	case chat.ProblemNotHTTPURL:
		return name + " must be an absolute http or https address"
	case chat.ProblemNotStatus:
		return fmt.Sprintf("%s must be %q or %q", name, chat.StatusPublished, chat.StatusDraft)
	case chat.ProblemNoQuestions:
		return name + " needs at least one of questions: a curated item is the answer to its questions"
	default: // chat.ProblemNotText
		return name + " must be UTF-8 text without NUL characters"
	}
}

// knowledgeLimit explains a new item refused past the plan's items ceiling; other errors pass as they are.
func knowledgeLimit(err error, m *tenant.Bundle) error {
	return explain(err, store.ErrKnowledgeLimit, "the merchant's plan allows %d knowledge items and all are used", m.Plan.KnowledgeItems)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Server) createKnowledge(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	k, err := readKnowledge(w, r)
	if err != nil {
		return err
	}
	if k, err = s.chat.CreateKnowledge(r.Context(), m, k); err != nil {
		return knowledgeLimit(err, m)
	}
	w.Header().Set("Location", "/api/v1/knowledge/"+k.ID)
	writeJSON(w, http.StatusCreated, toKnowledgeJSON(k))
	return nil
}

func (s *Server) getKnowledge(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	k, err := s.knowledgeByPath(r, m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toKnowledgeJSON(k))
	return nil
}

func (s *Server) updateKnowledge(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	old, err := s.knowledgeByPath(r, m)
	if err != nil {
		return err
	}
	k, err := readKnowledge(w, r)
	if err != nil {
		return err
	}
	if k, err = s.chat.UpdateKnowledge(r.Context(), m, old, k); err != nil {
		return explain(err, store.ErrNotFound, "no such knowledge item")
	}
	writeJSON(w, http.StatusOK, toKnowledgeJSON(k))
	return nil
}

func (s *Server) deleteKnowledge(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id := r.PathValue("id")
	if len(id) > maxKnowledgeIDSize || !input.Storable(id) {
		return notFound("knowledge item")
	}
	if err := s.chat.DeleteKnowledge(r.Context(), m, id); err != nil {
		return explain(err, store.ErrNotFound, "no such knowledge item")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) knowledgeByPath(r *http.Request, m *tenant.Bundle) (store.Knowledge, error) {
	id := r.PathValue("id")
	if len(id) > maxKnowledgeIDSize || !input.Storable(id) {
		return store.Knowledge{}, notFound("knowledge item")
	}
	k, err := s.store.GetKnowledge(r.Context(), m.MerchantID, id)
	return k, explain(err, store.ErrNotFound, "no such knowledge item")
}

func (s *Server) listKnowledge(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	f := store.KnowledgeFilter{}
	if f.Limit, f.Cursor, err = pageParams(q); err != nil {
		return err
	}
	if f.Query, err = textParam(q, "q"); err != nil {
		return err
	}
	if f.Tag, err = textParam(q, "tag"); err != nil {
		return err
	}
	var ok bool
	if f.Draft, ok = chat.ParseStatus(q.Get("status")); !ok {
		return newError(http.StatusBadRequest, codeInvalidRequest, "status must be %q or %q, not %q", chat.StatusPublished, chat.StatusDraft, q.Get("status"))
	}
	items, next, err := s.store.ListKnowledge(r.Context(), m.MerchantID, f)
	if err != nil {
		return err
	}
	out := make([]knowledgeJSON, len(items))
	for i, k := range items {
		out[i] = toKnowledgeJSON(k)
	}
	writeJSON(w, http.StatusOK, newPage(out, next))
	return nil
}

type questionJSON struct {
	Question string `json:"question"`
	Count    int    `json:"count"`
}

type dayJSON struct {
	Date          string `json:"date"`
	Conversations int    `json:"conversations"`
	Messages      int    `json:"messages"`
	Handoffs      int    `json:"handoffs"`
}

type overviewJSON struct {
	From                       time.Time      `json:"from"`
	To                         time.Time      `json:"to"`
	Conversations              int            `json:"conversations"`
	Messages                   int            `json:"messages"`
	Visitors                   int            `json:"visitors"`
	AnsweredRate               float64        `json:"answered_rate"`
	UnansweredRate             float64        `json:"unanswered_rate"`
	AvgMessagesPerConversation float64        `json:"avg_messages_per_conversation"`
	Leads                      int            `json:"leads"`
	ModelTokens                int64          `json:"model_tokens"`
	TopQuestions               []questionJSON `json:"top_questions"`
	UnansweredQuestions        []questionJSON `json:"unanswered_questions"`
	Handoffs                   int            `json:"handoffs"`
	HumanReplies               int            `json:"human_replies"`
	AvgFirstHumanReplySeconds  float64        `json:"avg_first_human_reply_seconds"`
	ResolvedByBot              int            `json:"resolved_by_bot"`
	Daily                      []dayJSON      `json:"daily"`
}

func (s *Server) analyticsOverview(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	now := s.now().UTC()
	q, err := query(r)
	if err != nil {
		return err
	}
	from, to, err := timeRange(q)
	if err != nil {
		return err
	}
	if to.IsZero() {
		// Through the end of today, so that what just happened is counted.
		to = time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		if !from.IsZero() && !from.Before(to) {
			return newError(http.StatusBadRequest, codeInvalidRequest, "from must be before to, which is the end of today when left out")
		}
	}
	if from.IsZero() {
		from = to.AddDate(0, 0, -defaultRangeDays)
	}
	o, err := s.store.Overview(r.Context(), m.MerchantID, from, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toOverviewJSON(o, from, to))
	return nil
}

func toOverviewJSON(o store.Overview, from, to time.Time) overviewJSON {
	out := overviewJSON{From: from, To: to, Conversations: o.Conversations, Messages: o.Messages, Visitors: o.Visitors,
		Leads: o.Leads, ModelTokens: o.ModelTokens, TopQuestions: questions(o.TopQuestions), UnansweredQuestions: questions(o.UnansweredQuestions),
		Handoffs: o.Handoffs, HumanReplies: o.HumanReplies, AvgFirstHumanReplySeconds: o.HumanReplyTime.Seconds(),
		ResolvedByBot: o.ResolvedByBot, Daily: make([]dayJSON, len(o.Daily))}
	if replies := o.AnsweredMessages + o.UnansweredMessages; replies > 0 {
		out.AnsweredRate = float64(o.AnsweredMessages) / float64(replies)
		out.UnansweredRate = float64(o.UnansweredMessages) / float64(replies)
	}
	if o.Conversations > 0 {
		out.AvgMessagesPerConversation = float64(o.Messages) / float64(o.Conversations)
	}
	for i, d := range o.Daily {
		out.Daily[i] = dayJSON{Date: d.Date, Conversations: d.Conversations, Messages: d.Messages, Handoffs: d.Handoffs}
	}
	return out
}

func questions(in []store.QuestionCount) []questionJSON {
	out := make([]questionJSON, len(in))
	for i, q := range in {
		out[i] = questionJSON{Question: q.Question, Count: q.Count}
	}
	return out
}

// pageParams reads limit (1 to 100, default 20) and cursor.
func pageParams(q url.Values) (int, string, error) {
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return 0, "", newError(http.StatusBadRequest, codeInvalidRequest, "limit must be a whole number from 1 to %d, not %q", maxPageSize, v)
		}
		limit = n
	}
	cursor := q.Get("cursor")
	if len(cursor) > 512 {
		return 0, "", store.ErrInvalidCursor // longer than any cursor a listing issues
	}
	return limit, cursor, nil
}

// textParam reads a free-text filter of at most 200 characters.
func textParam(q url.Values, name string) (string, error) {
	v := strings.TrimSpace(q.Get(name))
	if utf8.RuneCountInString(v) > maxQueryRunes || !utf8.ValidString(v) {
		return "", newError(http.StatusBadRequest, codeInvalidRequest, "%s must be text of at most %d characters", name, maxQueryRunes)
	}
	return v, nil
}

// timeRange reads from and to: RFC 3339 times or YYYY-MM-DD dates (UTC midnight). Zero means not given.
func timeRange(q url.Values) (from, to time.Time, err error) {
	if from, err = timeParam(q, "from"); err != nil {
		return
	}
	if to, err = timeParam(q, "to"); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		err = newError(http.StatusBadRequest, codeInvalidRequest, "from must be before to")
	}
	return
}

// Times a filter may name: anything outside cannot be a record's time, and the zero time means "not given".
var (
	earliestTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	latestTime   = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
)

func timeParam(q url.Values, name string) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, v); err != nil {
			return time.Time{}, newError(http.StatusBadRequest, codeInvalidRequest, "%s must be an RFC 3339 time or a YYYY-MM-DD date, not %q", name, v)
		}
	}
	if t = t.UTC(); t.Before(earliestTime) || !t.Before(latestTime) {
		return time.Time{}, newError(http.StatusBadRequest, codeInvalidRequest, "%s must be from 1970 up to the year 9000, not %q", name, v)
	}
	return t, nil
}
