package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// queueSize is the most conversations each list of the inbox shows.
const queueSize = 100

// queued is a conversation of the inbox with how long its visitor has waited.
type queued struct {
	store.Conversation
	// WaitMinutes is how long the visitor has waited since asking for a person, in whole minutes.
	WaitMinutes int
}

// inbox shows the conversations handed to the team: those waiting for someone, longest waiting first, and those
// the team has. The page refreshes itself (app.js) and tells of a new waiting conversation; while it is open the
// team counts as there for visitors who ask for a person.
func (d *Dashboard) inbox(w http.ResponseWriter, r *http.Request, v *view) error {
	if v.merchant == nil {
		return &userError{status: http.StatusForbidden, message: "Choose a merchant you own first."}
	}
	if err := d.chat.TeamSeen(r.Context(), v.merchant); err != nil {
		return err
	}
	now := d.now()
	lists := map[string][]queued{}
	for _, status := range []store.Status{store.StatusWaiting, store.StatusAgent} {
		list, _, err := d.store.ListConversations(r.Context(), v.merchant.MerchantID, store.ConversationFilter{Status: status, Limit: queueSize})
		if err != nil {
			return err
		}
		out := make([]queued, len(list))
		for i, c := range list {
			out[i] = queued{Conversation: c, WaitMinutes: int(now.Sub(c.HandoffAt) / time.Minute)}
		}
		// The listing is newest first; the queue is served longest waiting first.
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		lists[string(status)] = out
	}
	d.render(w, r, v, http.StatusOK, "inbox", map[string]any{"Waiting": lists["waiting"], "Agent": lists["agent"]})
	return nil
}

// teamMessage writes the team member's message into a conversation, which the team then has.
func (d *Dashboard) teamMessage(w http.ResponseWriter, r *http.Request, v *view) error {
	text, author := strings.TrimSpace(r.PostFormValue("text")), strings.TrimSpace(r.PostFormValue("author"))
	if text == "" {
		return badRequest("Write a message first.")
	}
	if len([]rune(text)) > 4000 || len([]rune(author)) > 80 {
		return badRequest("The message or the name is too long.")
	}
	if _, _, err := d.chat.PostTeamMessage(r.Context(), v.merchant, r.PathValue("id"), chat.TeamMessage{Text: text, Author: author}); err != nil {
		return err
	}
	return d.backToConversation(w, r, "sent")
}

// takeOver, release and closeConversation move a conversation, as the API's calls of the same names do.
func (d *Dashboard) takeOver(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := d.chat.TakeOver(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	return d.backToConversation(w, r, "taken-over")
}

func (d *Dashboard) release(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := d.chat.Release(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	return d.backToConversation(w, r, "released")
}

func (d *Dashboard) closeConversation(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := d.chat.Close(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	return d.backToConversation(w, r, "closed")
}

func (d *Dashboard) backToConversation(w http.ResponseWriter, r *http.Request, notice string) error {
	http.Redirect(w, r, prefix+"conversations/"+r.PathValue("id")+"?ok="+notice, http.StatusSeeOther)
	return nil
}
