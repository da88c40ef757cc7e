package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// sourceRow is a knowledge source as the websites page lists it.
type sourceRow struct {
	store.KnowledgeSource
	// Interval is the sync interval as it was given ("24h").
	Interval string
}

// sources lists the merchant's websites, with each sync's progress and outcome, and the form to add one.
func (d *Dashboard) sources(w http.ResponseWriter, r *http.Request, v *view) error {
	return d.sourcesPage(w, r, v, http.StatusOK, nil, chat.SourceInput{})
}

func (d *Dashboard) sourcesPage(w http.ResponseWriter, r *http.Request, v *view, status int, problems []string, in chat.SourceInput) error {
	list, err := d.store.ListSources(r.Context(), v.merchant.MerchantID)
	if err != nil {
		return err
	}
	rows := make([]sourceRow, len(list))
	syncing := false
	for i, src := range list {
		rows[i] = sourceRow{KnowledgeSource: src, Interval: interval(src.SyncInterval)}
		syncing = syncing || src.Status == store.SourcePending || src.Status == store.SourceSyncing
	}
	d.render(w, r, v, status, "sources", map[string]any{"List": rows, "Problems": problems, "URL": in.URL,
		"Git": in.Type == store.SourceGit, "Ref": in.Ref, "Syncing": syncing, "Limit": v.merchant.Plan.SourcesLimit()})
	return nil
}

// interval writes a sync interval as it is usually given: "24h", "90m".
func interval(d time.Duration) string {
	s := strings.Replace(d.String(), "m0s", "m", 1)
	return strings.Replace(s, "h0m", "h", 1)
}

// createSource adds a website or a Git repository; its first sync starts at once.
func (d *Dashboard) createSource(w http.ResponseWriter, r *http.Request, v *view) error {
	in := chat.SourceInput{Type: r.PostForm.Get("type"), URL: strings.TrimSpace(r.PostForm.Get("url")),
		SyncInterval: r.PostForm.Get("sync_interval")}
	if in.Type == store.SourceGit {
		in.Ref = strings.TrimSpace(r.PostForm.Get("ref")) // the field is there for either type; a website has none
	}
	src, problems := in.Validate(v.merchant.Plan)
	if problems != nil {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = sourceProblem(v.lang, p)
		}
		return d.sourcesPage(w, r, v, http.StatusUnprocessableEntity, msgs, in)
	}
	if _, err := d.chat.CreateSource(r.Context(), v.merchant, src); err != nil {
		if errors.Is(err, chat.ErrSourceLimit) {
			return d.sourcesPage(w, r, v, http.StatusConflict, []string{fmt.Sprintf(translate(v.lang,
				"Your plan allows %d websites, and all are in use: delete one first."), v.merchant.Plan.SourcesLimit())}, in)
		}
		return err
	}
	notice := "source-added"
	if src.Type == store.SourceGit {
		notice = "repository-added"
	}
	http.Redirect(w, r, prefix+"sources?ok="+notice, http.StatusSeeOther)
	return nil
}

// sourceProblem words a problem of the website form in lang.
func sourceProblem(lang string, p chat.FieldError) string {
	switch {
	case p.Field == chat.FieldURL && p.Problem == chat.ProblemMissing:
		return translate(lang, "Enter the website's address.")
	case p.Field == chat.FieldURL:
		return translate(lang, "The address must be a whole http or https address, such as https://shop.example/help/.")
	case p.Field == chat.FieldType:
		return translate(lang, "Choose a website or a Git repository.")
	case p.Field == chat.FieldRef:
		return translate(lang, "The branch or tag must be a Git branch or tag name, such as main or v2.")
	case p.Problem == chat.ProblemNotDuration:
		return translate(lang, "The interval must be a duration such as 24h or 90m.")
	default:
		return fmt.Sprintf(translate(lang, "The interval must be between %s and %s."),
			interval(time.Duration(p.Limit)*time.Second), interval(time.Duration(p.Length)*time.Second))
	}
}

// syncSource syncs a website now.
func (d *Dashboard) syncSource(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := d.chat.RequestSync(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"sources?ok=sync-requested", http.StatusSeeOther)
	return nil
}

// deleteSource deletes a website and its items.
func (d *Dashboard) deleteSource(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := d.chat.DeleteSource(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"sources?ok=source-deleted", http.StatusSeeOther)
	return nil
}
