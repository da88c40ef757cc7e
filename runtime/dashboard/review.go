package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/transcript"
)

// reviewGroup is a group of the review queue with the items that may answer it, to list its question under.
type reviewGroup struct {
	chat.ReviewGroup
	Candidates []assistant.Hit
}

// review shows the review queue: what visitors asked that the assistant missed, most missed first, with the
// actions that fix it.
func (d *Dashboard) review(w http.ResponseWriter, r *http.Request, v *view) error {
	groups, err := d.chat.Review(r.Context(), v.merchant)
	if err != nil {
		return err
	}
	list := make([]reviewGroup, len(groups))
	for i, g := range groups {
		hits, err := d.chat.Candidates(r.Context(), v.merchant, g.Question, maxCandidates)
		if err != nil {
			return err
		}
		list[i] = reviewGroup{ReviewGroup: g, Candidates: hits}
	}
	d.render(w, r, v, http.StatusOK, "review", map[string]any{"List": list, "CanDraft": d.chat.CanDraft(v.merchant)})
	return nil
}

// exportReview downloads the review queue as CSV, as the API's format=csv gives it, for teams that work in a
// spreadsheet.
func (d *Dashboard) exportReview(w http.ResponseWriter, r *http.Request, v *view) error {
	groups, err := d.chat.Review(r.Context(), v.merchant)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("review-%s-%s.csv", v.merchant.MerchantID, d.now().UTC().Format("20060102"))
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	return transcript.ReviewCSV(w, groups)
}

// fixReview lists a group's question under the item chosen, or marks the group as dealt with.
func (d *Dashboard) fixReview(w http.ResponseWriter, r *http.Request, v *view) error {
	f := chat.Fix{Questions: r.PostForm["questions"], KnowledgeID: r.PostFormValue("knowledge_id"), List: r.PostFormValue("list_question")}
	if _, err := d.chat.RecordFix(r.Context(), v.merchant, f); err != nil {
		if errors.Is(err, chat.ErrInvalidFix) {
			d.renderErrorView(w, r, v, http.StatusUnprocessableEntity, cannotList)
			return nil
		}
		return err
	}
	http.Redirect(w, r, prefix+"review?ok=review-fixed", http.StatusSeeOther)
	return nil
}

// draftReview asks the merchant's model to draft an answer for a group of the queue and shows it in the
// knowledge page's add form, to edit and save; nothing is stored until then.
func (d *Dashboard) draftReview(w http.ResponseWriter, r *http.Request, v *view) error {
	draft, err := d.chat.DraftAnswer(r.Context(), v.merchant, r.PostForm["questions"])
	if status, message := draftFailure(err); status != 0 {
		d.renderErrorView(w, r, v, status, message)
		return nil
	}
	if err != nil {
		return err
	}
	return d.renderKnowledge(w, r, v, http.StatusOK, map[string]any{"Drafted": true, "Review": r.PostForm["questions"],
		"New": knowledgeInput{Title: draft.Title, Content: draft.Content, Questions: draft.Questions, Tags: []string{}}})
}

// draftFailure is the status and message of a draft that failed in a way the owner can act on, or 0.
func draftFailure(err error) (int, string) {
	switch {
	case errors.Is(err, chat.ErrInvalidFix), errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, "That question is no longer in the review queue."
	case errors.Is(err, assistant.ErrNoModel):
		return http.StatusConflict, "No model answers for you: your plan names none. Write the answer yourself."
	case errors.Is(err, chat.ErrTokensUsedUp):
		return http.StatusTooManyRequests, "Your plan's model tokens for this month are used up. Write the answer yourself."
	case errors.Is(err, assistant.ErrModelTimedOut):
		return http.StatusGatewayTimeout, "Your model did not answer in time. Try again."
	case errors.Is(err, assistant.ErrModelFailed):
		return http.StatusBadGateway, "Your model could not draft an answer. Try again."
	}
	return 0, ""
}

// cannotList says why a question could not be listed under an item.
const cannotList = "The question could not be listed under that item: it lists too many questions already, or the item is too long."

// progressWeeks is how many weeks the overview's "Did it work" shows.
const progressWeeks = 8

// weekRow is one week of the overview's "Did it work", each rate as "n of m (p%)", or "–" when nothing was counted.
type weekRow struct {
	Week, Answered, ThumbsDown, Satisfied string
}

// weekRows words the weeks' rates for the overview.
func weekRows(p chat.Progress, lang string) []weekRow {
	rows := make([]weekRow, len(p.Weeks))
	for i, w := range p.Weeks {
		rows[i] = weekRow{Week: w.Start.Format(time.DateOnly), Answered: rate(lang, w.Answered, w.Answered+w.Unanswered),
			ThumbsDown: rate(lang, w.ThumbsDown, w.Rated), Satisfied: rate(lang, w.Satisfied, w.Surveys)}
	}
	return rows
}

// rate words n of total as a share.
func rate(lang string, n, total int) string {
	if total == 0 {
		return "–"
	}
	return fmt.Sprintf(translate(lang, "%d of %d (%d%%)"), n, total, (100*n+total/2)/total)
}
