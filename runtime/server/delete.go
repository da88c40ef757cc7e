package server

import (
	"net/http"

	"github.com/parley-dev/parley/runtime/input"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxLeadIDSize bounds a lead ID in a path; the runtime's are far shorter.
const maxLeadIDSize = 128

// deleteConversation deletes one of the merchant's conversations with everything that belongs to it: 204, or 404
// for an ID the merchant has no conversation of (another merchant's included).
func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id := r.PathValue("id")
	if !conversationIDPattern.MatchString(id) {
		return notFound("conversation")
	}
	if err := s.chat.DeleteConversation(r.Context(), m, id); err != nil {
		return explain(err, store.ErrNotFound, "no such conversation")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// deleteLead deletes one of the merchant's leads with its webhook events: 204, or 404 for an ID the merchant has
// no lead of (another merchant's included).
func (s *Server) deleteLead(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id := r.PathValue("id")
	if len(id) > maxLeadIDSize || !input.Storable(id) {
		return notFound("lead")
	}
	if err := s.chat.DeleteLead(r.Context(), m, id); err != nil {
		return explain(err, store.ErrNotFound, "no such lead")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
