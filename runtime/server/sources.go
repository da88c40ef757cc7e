package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/input"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxSourceBody bounds a source's JSON: an address and a few dozen patterns.
const maxSourceBody = 64 << 10

type sourceInput struct {
	Type         string   `json:"type"`
	URL          string   `json:"url"`
	Ref          string   `json:"ref"`
	Include      []string `json:"include"`
	Exclude      []string `json:"exclude"`
	MaxPages     int      `json:"max_pages"`
	SyncInterval string   `json:"sync_interval"`
}

type knowledgeSourceJSON struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	URL          string     `json:"url"`
	Ref          string     `json:"ref,omitempty"`
	Include      []string   `json:"include"`
	Exclude      []string   `json:"exclude"`
	MaxPages     int        `json:"max_pages"`
	SyncInterval string     `json:"sync_interval"`
	Status       string     `json:"status"`
	PagesFound   int        `json:"pages_found"`
	Pages        int        `json:"pages"`
	Items        int        `json:"items"`
	LastSyncedAt *time.Time `json:"last_synced_at"`
	NextSyncAt   time.Time  `json:"next_sync_at"`
	Error        string     `json:"error"`
	CreatedAt    time.Time  `json:"created_at"`
	// Declared says a KnowledgeSource object declares the source, which only that object changes.
	Declared bool `json:"declared"`
	// PagesRead is the source's pages, read and skipped, in GET /api/v1/knowledge/sources/{id} only.
	PagesRead []sourcePageJSON `json:"pages_read,omitempty"`
}

type sourcePageJSON struct {
	URL       string    `json:"url"`
	Status    string    `json:"status"`
	Reason    string    `json:"reason,omitempty"`
	Items     int       `json:"items"`
	FetchedAt time.Time `json:"fetched_at"`
}

func toKnowledgeSourceJSON(src store.KnowledgeSource) knowledgeSourceJSON {
	out := knowledgeSourceJSON{ID: src.ID, Type: src.Type, URL: src.URL, Ref: src.Ref, Include: orEmpty(src.Include),
		Exclude: orEmpty(src.Exclude), MaxPages: src.MaxPages, SyncInterval: formatInterval(src.SyncInterval),
		Status: src.Status, PagesFound: src.PagesFound, Pages: src.Pages, Items: src.Items, NextSyncAt: src.NextSyncAt.UTC(),
		Error: src.Error, CreatedAt: src.CreatedAt.UTC(), Declared: src.Declared()}
	if !src.LastSyncedAt.IsZero() {
		t := src.LastSyncedAt.UTC()
		out.LastSyncedAt = &t
	}
	return out
}

// formatInterval writes an interval as it is usually given: "24h", "90m", "1h30m".
func formatInterval(d time.Duration) string {
	s := d.String()
	s = strings.Replace(s, "m0s", "m", 1)
	return strings.Replace(s, "h0m", "h", 1)
}

func (s *Server) createSource(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var in sourceInput
	if err := decodeJSON(w, r, maxSourceBody, &in); err != nil {
		return err
	}
	src, problems := chat.SourceInput{Type: in.Type, URL: in.URL, Ref: in.Ref, Include: in.Include, Exclude: in.Exclude,
		MaxPages: in.MaxPages, SyncInterval: in.SyncInterval}.Validate(m.Plan)
	if problems != nil {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = sourceProblem(p)
		}
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", strings.Join(msgs, "; "))
	}
	src, err := s.chat.CreateSource(r.Context(), m, src)
	if err != nil {
		return explain(err, chat.ErrSourceLimit, "the merchant's plan allows %d knowledge sources and all are used", m.Plan.SourcesLimit())
	}
	w.Header().Set("Location", "/api/v1/knowledge/sources/"+src.ID)
	writeJSON(w, http.StatusCreated, toKnowledgeSourceJSON(src))
	return nil
}

// sourceProblem words a source's problem for an API client, naming the JSON field.
func sourceProblem(p chat.FieldError) string {
	name := p.Field
	if p.Index >= 0 {
		name = fmt.Sprintf("%s[%d]", p.Field, p.Index)
	}
	switch p.Problem {
	case chat.ProblemNotSourceType:
		return name + ` must be "website" or "git"`
	case chat.ProblemNotGitRef:
		return name + ` must be a Git branch or tag, and only a "git" source has one`
	case chat.ProblemNotPattern:
		return name + ` must be a path pattern starting with "/" (wildcards: *, **, ?)`
	case chat.ProblemNotDuration:
		return name + ` must be a duration such as "24h" or "90m"`
	case chat.ProblemOutOfRange:
		if p.Field == chat.FieldSyncInterval {
			return fmt.Sprintf("%s must be between %s (the plan's floor) and %s", name,
				formatInterval(time.Duration(p.Limit)*time.Second), formatInterval(time.Duration(p.Length)*time.Second))
		}
		return fmt.Sprintf("%s must be between %d and %d (the plan's pages per source)", name, p.Limit, p.Length)
	case chat.ProblemTooLong:
		return fmt.Sprintf("%s is %d bytes long; at most %d are allowed", name, p.Length, p.Limit)
	}
	return knowledgeProblem(p)
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	list, err := s.store.ListSources(r.Context(), m.MerchantID)
	if err != nil {
		return err
	}
	out := make([]knowledgeSourceJSON, len(list))
	for i, src := range list {
		out[i] = toKnowledgeSourceJSON(src)
	}
	writeJSON(w, http.StatusOK, newPage(out, ""))
	return nil
}

func (s *Server) getSource(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id, err := sourceID(r)
	if err != nil {
		return err
	}
	src, err := s.store.GetSource(r.Context(), m.MerchantID, id)
	if err != nil {
		return explain(err, store.ErrNotFound, "no such knowledge source")
	}
	pages, err := s.store.ListSourcePages(r.Context(), m.MerchantID, id)
	if err != nil {
		return err
	}
	out := toKnowledgeSourceJSON(src)
	out.PagesRead = make([]sourcePageJSON, len(pages))
	for i, p := range pages {
		out.PagesRead[i] = sourcePageJSON{URL: p.URL, Status: p.Status, Reason: p.Reason, Items: p.Items, FetchedAt: p.FetchedAt.UTC()}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) syncSource(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id, err := sourceID(r)
	if err != nil {
		return err
	}
	src, err := s.chat.RequestSync(r.Context(), m, id)
	if err != nil {
		return explain(err, store.ErrNotFound, "no such knowledge source")
	}
	writeJSON(w, http.StatusAccepted, toKnowledgeSourceJSON(src))
	return nil
}

func (s *Server) deleteSource(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id, err := sourceID(r)
	if err != nil {
		return err
	}
	if err := s.chat.DeleteSource(r.Context(), m, id); err != nil {
		return explain(err, store.ErrNotFound, "no such knowledge source")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sourceID is the source the path names; one no store could hold is not found.
func sourceID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if len(id) > maxKnowledgeIDSize || !input.Storable(id) {
		return "", notFound("knowledge source")
	}
	return id, nil
}
