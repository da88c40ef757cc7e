package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

const pageSize = 20

// merchants lists the merchants the user owns, to choose one.
func (d *Dashboard) merchants(w http.ResponseWriter, r *http.Request, v *view) error {
	// The page asked for before a merchant was chosen, to go on to once one is.
	d.render(w, r, v, http.StatusOK, "merchants", struct{ Next string }{localPath(r.URL.Query().Get("next"))})
	return nil
}

// chooseMerchant makes one of the user's merchants the session's. Choosing another one gives the session a new
// CSRF token: the forms of pages shown for the other merchant, in other tabs, are refused rather than applied to
// this one.
func (d *Dashboard) chooseMerchant(w http.ResponseWriter, r *http.Request, v *view) error {
	want := r.PostFormValue("merchant")
	for _, m := range v.owned {
		if m.MerchantID == want {
			if v.session.Merchant != m.MerchantID {
				v.session.CSRF = newToken()
			}
			v.session.Merchant = m.MerchantID
			if err := d.cookies.saveSession(w, v.session); err != nil {
				return fmt.Errorf("sealing the session: %w", err)
			}
			next := localPath(r.PostFormValue("next"))
			if next == "" {
				next = prefix
			}
			// next is a page of the dashboard: localPath returns nothing else.
			http.Redirect(w, r, next, http.StatusSeeOther)
			return nil
		}
	}
	return &userError{status: http.StatusForbidden, message: "You are not an owner of that merchant."}
}

// overview shows the analytics of the last 7, 30 or 90 days and the usage of the plan.
func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request, v *view) error {
	days := 30
	if n, err := strconv.Atoi(r.URL.Query().Get("days")); err == nil && (n == 7 || n == 90) {
		days = n
	}
	to := d.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -days)
	o, err := d.store.Overview(r.Context(), v.merchant.MerchantID, from, to)
	if err != nil {
		return err
	}
	u, err := d.chat.Usage(r.Context(), v.merchant)
	if err != nil {
		return err
	}
	progress, err := d.chat.Progress(r.Context(), v.merchant, progressWeeks)
	if err != nil {
		return err
	}
	conv, msgs := dailyCharts(o, from, days, v.lang)
	d.render(w, r, v, http.StatusOK, "overview", map[string]any{"Days": days, "Overview": o, "Usage": u,
		"Conversations": conv, "Messages": msgs, "Answers": answerChart(o, v.lang),
		"Weeks": weekRows(progress, v.lang), "Fixes": progress.Fixes})
	return nil
}

// conversations lists conversations with the API's filters: dates, text and whether there is a lead.
func (d *Dashboard) conversations(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := store.ConversationFilter{Query: q.Get("q"), Limit: pageSize, Cursor: q.Get("cursor")}
	var err error
	if f.From, err = dateParam(q, "from", 0); err != nil {
		return err
	}
	if f.To, err = dateParam(q, "to", 1); err != nil {
		return err
	}
	switch q.Get("lead") {
	case "yes":
		f.HasLead = new(true)
	case "no":
		f.HasLead = new(false)
	}
	list, next, err := d.store.ListConversations(r.Context(), v.merchant.MerchantID, f)
	if err != nil {
		return err
	}
	d.render(w, r, v, http.StatusOK, "conversations", map[string]any{"List": list, "Filter": q, "Next": nextPage(r, next)})
	return nil
}

// conversation shows a conversation's messages, their sources, and its lead.
func (d *Dashboard) conversation(w http.ResponseWriter, r *http.Request, v *view) error {
	c, msgs, err := d.store.GetConversation(r.Context(), v.merchant.MerchantID, r.PathValue("id"))
	if err != nil {
		return err
	}
	leads, _, err := d.store.ListLeads(r.Context(), v.merchant.MerchantID, store.LeadFilter{ConversationID: c.ID, Limit: 10})
	if err != nil {
		return err
	}
	ratings, sat, err := d.store.ConversationRatings(r.Context(), v.merchant.MerchantID, c.ID)
	if err != nil {
		return err
	}
	rated := make(map[string]store.Rating, len(ratings))
	for _, x := range ratings {
		rated[x.MessageID] = x
	}
	d.render(w, r, v, http.StatusOK, "conversation", map[string]any{"Conversation": c, "Messages": msgs, "Leads": leads,
		"Unanswered": unansweredQuestions(msgs), "Ratings": rated, "Satisfaction": sat})
	return nil
}

// unansweredQuestions maps each reply that did not answer to the visitor's message before it, when that could be
// listed as an item's question: the page links it to the knowledge page that helps answer it.
func unansweredQuestions(msgs []store.Message) map[string]string {
	out := map[string]string{}
	for i, m := range msgs {
		if i > 0 && m.Role == store.RoleAssistant && !m.Answered && msgs[i-1].Role == store.RoleVisitor {
			if q := listableQuestion(msgs[i-1].Text); q != "" {
				out[m.ID] = q
			}
		}
	}
	return out
}

// leads lists the merchant's leads.
func (d *Dashboard) leads(w http.ResponseWriter, r *http.Request, v *view) error {
	list, next, err := d.store.ListLeads(r.Context(), v.merchant.MerchantID, store.LeadFilter{Limit: pageSize, Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	d.render(w, r, v, http.StatusOK, "leads", map[string]any{"List": list, "Next": nextPage(r, next)})
	return nil
}

// webhooks shows the delivery log.
func (d *Dashboard) webhooks(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := store.DeliveryFilter{Limit: pageSize, Cursor: q.Get("cursor")}
	switch s := q.Get("status"); s {
	case store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed, store.DeliveryCancelled:
		f.Status = s
	}
	list, next, err := d.store.ListDeliveries(r.Context(), v.merchant.MerchantID, f)
	if err != nil {
		return err
	}
	d.render(w, r, v, http.StatusOK, "webhooks", map[string]any{"List": list, "Status": f.Status, "Next": nextPage(r, next),
		"Endpoints": v.merchant.Webhooks, "Enabled": v.merchant.Plan.Webhooks})
	return nil
}

// replay sends a finished delivery again.
func (d *Dashboard) replay(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := d.chat.ReplayDelivery(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"webhooks?ok=replayed", http.StatusSeeOther)
	return nil
}

// sendTestEvent sends a signed webhook.test event to one of the merchant's endpoints, whatever it subscribes to.
func (d *Dashboard) sendTestEvent(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := d.chat.SendTestEvent(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		if errors.Is(err, chat.ErrWebhooksNotInPlan) {
			return &userError{status: http.StatusForbidden, message: "Your plan does not include webhooks."}
		}
		return err
	}
	http.Redirect(w, r, prefix+"webhooks?ok=test-sent", http.StatusSeeOther)
	return nil
}

// settings shows the embed snippet, the widget's look and the merchant's keys: those declared as APIKey
// resources, read-only, and those created here.
func (d *Dashboard) settings(w http.ResponseWriter, r *http.Request, v *view) error {
	own, err := d.store.ListAPIKeys(r.Context(), v.merchant.MerchantID)
	if err != nil {
		return err
	}
	d.render(w, r, v, http.StatusOK, "settings", map[string]any{"Snippet": d.snippet(v.merchant, "YOUR_PUBLISHABLE_KEY"),
		"Keys": v.merchant.APIKeys, "OwnKeys": own, "SelfService": !v.merchant.SelfServiceKeysDisabled,
		"Widget": v.merchant.Widget, "Origins": v.merchant.AllowedOrigins, "APIAccess": v.merchant.Plan.APIAccess})
	return nil
}

// snippet is the widget's embed for the merchant with key.
func (d *Dashboard) snippet(m *tenant.Bundle, key string) string {
	return fmt.Sprintf(`<script src="%s/widget.js" data-api-key="%s" data-merchant-id="%s" async></script>`,
		d.publicURL, key, m.MerchantID)
}

// createKey creates a self-service key and shows it, this once.
func (d *Dashboard) createKey(w http.ResponseWriter, r *http.Request, v *view) error {
	typ := tenant.KeyType(r.PostFormValue("type"))
	if typ != tenant.KeyPublishable && typ != tenant.KeySecret {
		return badRequest("Choose a publishable or a secret key.")
	}
	if v.merchant.SelfServiceKeysDisabled {
		return &userError{status: http.StatusForbidden, message: "Your platform team manages this merchant's keys in Git; they cannot be created here."}
	}
	raw, k, err := d.chat.CreateAPIKey(r.Context(), d.tenants, v.merchant, typ)
	if err != nil {
		return err
	}
	data := map[string]any{"Key": raw, "Stored": k}
	if typ == tenant.KeyPublishable {
		data["Snippet"] = d.snippet(v.merchant, raw)
	}
	d.render(w, r, v, http.StatusCreated, "key_created", data)
	return nil
}

// revokeKey revokes a self-service key.
func (d *Dashboard) revokeKey(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := d.chat.RevokeAPIKey(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"settings?ok=revoked#keys-h", http.StatusSeeOther)
	return nil
}

// dateParam reads a YYYY-MM-DD date, plus addDays; zero when absent.
func dateParam(q url.Values, name string, addDays int) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, badRequest("The date %q is not valid; use YYYY-MM-DD.", s)
	}
	return t.AddDate(0, 0, addDays), nil
}

// nextPage is the request's URL continued at cursor, or "" at the end.
func nextPage(r *http.Request, cursor string) string {
	if cursor == "" {
		return ""
	}
	q := r.URL.Query()
	q.Set("cursor", cursor)
	q.Del("ok")
	return r.URL.Path + "?" + q.Encode()
}
