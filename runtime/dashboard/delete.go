package dashboard

import "net/http"

// deleteConversation deletes one of the merchant's conversations with everything that belongs to it (the same
// use case as DELETE /api/v1/conversations/{id}); another merchant's answers 404.
func (d *Dashboard) deleteConversation(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := d.chat.DeleteConversation(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"conversations?ok=conversation-deleted", http.StatusSeeOther)
	return nil
}

// deleteLead deletes one of the merchant's leads (the same use case as DELETE /api/v1/leads/{id}); another
// merchant's answers 404.
func (d *Dashboard) deleteLead(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := d.chat.DeleteLead(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"leads?ok=lead-deleted", http.StatusSeeOther)
	return nil
}
