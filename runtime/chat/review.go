package chat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	// ReviewWindow is how far back the review queue reads the answers that missed: a quarter, long enough for a
	// rare question to come back and short enough that what was fixed long ago is gone.
	ReviewWindow = 90 * 24 * time.Hour
	// maxReviewMisses bounds the misses one queue reads, newest first.
	maxReviewMisses = 5000
	// sameQuestionShare is how close, as a share of a question's score against itself, another question must
	// score in the retriever for the two to ask the same thing.
	sameQuestionShare = 0.6
	// maxFixQuestions bounds the questions one fix deals with: a group's wordings.
	maxFixQuestions = 100
	// LowConfidence is the retriever's confidence below which an answer given goes to the review queue. The
	// offline assistant answers from 0.5 (0.25 when the question names the item's title) and a curated answer has
	// 1: an answer below 0.6 was a near thing, the ones worth a look.
	LowConfidence = 0.6
)

// ReviewGroup is one thing visitors asked that the assistant missed, in the review queue: the questions that ask
// it, how often it was missed, and the latest answer given.
type ReviewGroup struct {
	// Question is the most asked wording, as a visitor asked it.
	Question string
	// Questions are the group's normalized questions, most asked first: what a fix deals with.
	Questions []store.QuestionCount
	// Asked counts the misses; Unanswered the answers the assistant could not give, ThumbsDown those rated down,
	// LowConfidence those given with a confidence below LowConfidence.
	Asked, Unanswered, ThumbsDown, LowConfidence int
	// Latest is the latest miss: the answer given, its sources, the visitor's rating and reason.
	Latest store.Miss
	// Comments are the visitors' reasons for rating the group's answers down, newest first.
	Comments []string
	// Conversations are the conversations of the latest misses, newest first, each once, at most
	// maxGroupConversations: where a drafted answer reads how the question was asked.
	Conversations []string
}

// maxGroupConversations bounds a review group's Conversations.
const maxGroupConversations = 3

// Review returns the merchant's review queue: the answers of the last ReviewWindow the assistant could not give, its
// visitors rated down or it gave with a confidence below LowConfidence, grouped when their questions ask the same thing, most missed first. A question dealt with
// (RecordFix) leaves the queue with its misses until then, and comes back with a miss after.
//
// Questions are grouped by the merchant's retriever itself: each normalized question is searched among the others,
// and those it finds with at least sameQuestionShare of its own score ask the same thing.
func (s *Service) Review(ctx context.Context, m *tenant.Bundle) ([]ReviewGroup, error) {
	misses, err := s.store.ReviewMisses(ctx, m.MerchantID, s.now().Add(-ReviewWindow), LowConfidence, maxReviewMisses)
	if err != nil {
		return nil, err
	}
	fixes, err := s.store.ReviewFixes(ctx, m.MerchantID)
	if err != nil {
		return nil, err
	}
	fixedAt := make(map[string]time.Time, len(fixes))
	for _, f := range fixes {
		fixedAt[f.Question] = f.FixedAt
	}
	// The misses by normalized question, newest first, those until their question's fix left out.
	byKey := map[string][]store.Miss{}
	var keys []string
	for _, miss := range misses {
		if miss.Normalized == "" || !miss.CreatedAt.After(fixedAt[miss.Normalized]) {
			continue
		}
		if _, seen := byKey[miss.Normalized]; !seen {
			keys = append(keys, miss.Normalized)
		}
		byKey[miss.Normalized] = append(byKey[miss.Normalized], miss)
	}
	var groups []ReviewGroup
	for _, members := range sameQuestions(keys, m.Widget.Locale) {
		groups = append(groups, reviewGroup(members, byKey))
	}
	slices.SortStableFunc(groups, func(a, b ReviewGroup) int {
		return cmp.Or(cmp.Compare(b.Asked, a.Asked), b.Latest.CreatedAt.Compare(a.Latest.CreatedAt))
	})
	return groups, nil
}

// reviewGroup sums the misses of the normalized questions keys.
func reviewGroup(keys []string, byKey map[string][]store.Miss) ReviewGroup {
	var g ReviewGroup
	var all []store.Miss
	for _, k := range keys {
		g.Questions = append(g.Questions, store.QuestionCount{Question: k, Count: len(byKey[k])})
		all = append(all, byKey[k]...)
	}
	slices.SortStableFunc(g.Questions, func(a, b store.QuestionCount) int { return cmp.Compare(b.Count, a.Count) })
	slices.SortStableFunc(all, func(a, b store.Miss) int { return b.CreatedAt.Compare(a.CreatedAt) })
	g.Asked, g.Latest = len(all), all[0]
	for _, miss := range all {
		if len(g.Conversations) < maxGroupConversations && miss.ConversationID != "" && !slices.Contains(g.Conversations, miss.ConversationID) {
			g.Conversations = append(g.Conversations, miss.ConversationID)
		}
		if !miss.Answered {
			g.Unanswered++
		}
		if lowConfidence(miss) {
			g.LowConfidence++
		}
		if miss.Rating == store.RatingDown {
			g.ThumbsDown++
			if miss.Comment != "" {
				g.Comments = append(g.Comments, miss.Comment)
			}
		}
	}
	// The wording shown is the latest one of the most asked normalized question.
	g.Question = byKey[g.Questions[0].Question][0].Question
	return g
}

// lowConfidence reports whether miss is an answer given with a measured confidence below LowConfidence.
func lowConfidence(miss store.Miss) bool {
	return miss.Answered && miss.Confidence > 0 && miss.Confidence < LowConfidence
}

// sameQuestions partitions the normalized questions keys into groups that ask the same thing, each group in the
// order of keys, the groups in the order of their first key.
func sameQuestions(keys []string, locale string) [][]string {
	if len(keys) == 0 {
		return nil
	}
	items := make([]assistant.Item, len(keys))
	for i, k := range keys {
		items[i] = assistant.Item{ID: strconv.Itoa(i), Title: k, Content: k}
	}
	ix := assistant.NewIndexForLocale(items, locale)
	parent := make([]int, len(keys))
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, k := range keys {
		hits := ix.Search(k, 10)
		self := 0.0
		for _, h := range hits {
			if h.Item.ID == items[i].ID {
				self = h.Score
			}
		}
		for _, h := range hits {
			j, _ := strconv.Atoi(h.Item.ID)
			if j != i && self > 0 && h.Score >= sameQuestionShare*self {
				parent[root(j)] = root(i)
			}
		}
	}
	at := map[int]int{}
	var groups [][]string
	for i, k := range keys {
		r := root(i)
		n, ok := at[r]
		if !ok {
			n = len(groups)
			at[r] = n
			groups = append(groups, nil)
		}
		groups[n] = append(groups[n], k)
	}
	return groups
}

// Fix is how a merchant dealt with a group of the review queue.
type Fix struct {
	// Questions are the group's normalized questions (ReviewGroup.Questions): their misses until now are dealt
	// with.
	Questions []string
	// KnowledgeID is the item the merchant listed the question under, edited or wrote; may be empty.
	KnowledgeID string
	// New is an item the merchant wrote for the group (a drafted answer, edited), to add with the fix in one
	// request, so that saving it deals with the group; KnowledgeID is then left empty and becomes its ID.
	New *store.Knowledge
	// List, when set with KnowledgeID, is the question to list under the item, as a visitor would ask it.
	List string
}

// ErrInvalidFix refuses a fix that names no questions, too many, lists a question under no item, or both names
// an item and writes one.
var ErrInvalidFix = errors.New("invalid fix")

// RecordFix deals with a group of the review queue: with Fix.New, it adds that item, within the plan's ceilings
// (as CreateKnowledge); with Fix.List, it lists that question under the item (kept once, within the item's and
// the plan's limits), so that the retriever answers it from the item; and it records, for each of the group's
// questions, that it was dealt with now. All of it is one transaction: a fix that fails writes nothing. The group
// leaves the queue, and comes back when one of its questions is missed again. An item that is not the merchant's
// is store.ErrNotFound.
func (s *Service) RecordFix(ctx context.Context, m *tenant.Bundle, f Fix) (store.Knowledge, error) {
	if err := checkGroupQuestions(f.Questions); err != nil {
		return store.Knowledge{}, err
	}
	var item store.Knowledge
	switch {
	case f.New != nil && f.KnowledgeID != "":
		return store.Knowledge{}, fmt.Errorf("%w: name an item or write one, not both", ErrInvalidFix)
	case f.New != nil:
		item = s.newItem(m, *f.New)
	case f.KnowledgeID != "":
		var err error
		if item, err = s.store.GetKnowledge(ctx, m.MerchantID, f.KnowledgeID); err != nil {
			return store.Knowledge{}, fmt.Errorf("fixing with item %s: %w", f.KnowledgeID, err)
		}
	}
	listed, changed, err := listQuestion(item, f.List)
	if err != nil {
		return store.Knowledge{}, err
	}
	if changed && f.New == nil {
		listed = s.changedItem(m, item, listed)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	lim := KnowledgeLimitsOf(m.Plan)
	err = s.store.Write(ctx, func(tx store.Tx) error {
		switch {
		case f.New != nil:
			if err := insertKnowledge(ctx, tx, listed, lim); err != nil {
				return err
			}
		case changed:
			if err := replaceKnowledge(ctx, tx, listed, lim.MaxChars); err != nil {
				return err
			}
		}
		for _, q := range f.Questions {
			if err := tx.SaveReviewFix(ctx, store.ReviewFix{MerchantID: m.MerchantID, Question: q, KnowledgeID: item.ID, FixedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("recording a fix: %w", err)
	}
	if f.New != nil || changed {
		s.knowledgeChanged(ctx, m.MerchantID)
	}
	return listed, nil
}

// listQuestion returns item with the question list listed under it, white space folded, and whether that
// changed it: a question it lists already (in any case) leaves it as it is. A question listed under no item, or
// one the item cannot list (past MaxQuestions, too long), is ErrInvalidFix.
func listQuestion(item store.Knowledge, list string) (store.Knowledge, bool, error) {
	list = strings.Join(strings.Fields(list), " ")
	switch {
	case list == "":
		return item, false, nil
	case item.ID == "":
		return store.Knowledge{}, false, fmt.Errorf("%w: a question is listed under an item: name it", ErrInvalidFix)
	case slices.ContainsFunc(item.Questions, func(q string) bool { return strings.EqualFold(q, list) }):
		return item, false, nil
	}
	in := KnowledgeInput{Title: item.Title, Content: item.Content, URL: item.URL, Tags: item.Tags,
		Questions: append(slices.Clone(item.Questions), list), Status: StatusOf(item), Curated: item.Curated}
	k, problems := in.Validate()
	if len(problems) > 0 {
		return store.Knowledge{}, false, fmt.Errorf("%w: the item cannot list the question: %s", ErrInvalidFix, problems[0].Error())
	}
	listed := item
	listed.Title, listed.Content, listed.URL, listed.Tags, listed.Questions, listed.Draft, listed.Curated =
		k.Title, k.Content, k.URL, k.Tags, k.Questions, k.Draft, k.Curated
	return listed, true, nil
}

// checkGroupQuestions refuses, with ErrInvalidFix, questions that cannot name a review group: none, too many, or
// one empty, not text or too long.
func checkGroupQuestions(questions []string) error {
	if len(questions) == 0 || len(questions) > maxFixQuestions {
		return fmt.Errorf("%w: name 1 to %d questions", ErrInvalidFix, maxFixQuestions)
	}
	for _, q := range questions {
		if q == "" || !storable(q) || utf8.RuneCountInString(q) > MaxQuestionRunes*5 {
			return fmt.Errorf("%w: a question is empty, not text or too long", ErrInvalidFix)
		}
	}
	return nil
}

// Progress is whether the answers get better: the last weeks' answers and ratings, and what each fix did.
type Progress struct {
	Weeks []store.FeedbackWeek
	Fixes []store.FixResult
}

// MaxProgressWeeks bounds the weeks Progress reads.
const MaxProgressWeeks = 52

// Progress returns the merchant's last n UTC weeks (from Monday, this one included) of answers and ratings, every
// week of them present, and each review fix with how often its question was asked since and answered.
func (s *Service) Progress(ctx context.Context, m *tenant.Bundle, n int) (Progress, error) {
	if n < 1 || n > MaxProgressWeeks {
		return Progress{}, fmt.Errorf("progress over %d weeks: want 1 to %d", n, MaxProgressWeeks)
	}
	now := s.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	from := monday.AddDate(0, 0, -7*(n-1))
	found, err := s.store.FeedbackWeeks(ctx, m.MerchantID, from, monday.AddDate(0, 0, 7))
	if err != nil {
		return Progress{}, err
	}
	p := Progress{Weeks: make([]store.FeedbackWeek, n)}
	for i := range p.Weeks {
		p.Weeks[i].Start = from.AddDate(0, 0, 7*i)
	}
	for _, w := range found {
		if i := int(w.Start.Sub(from).Hours() / (24 * 7)); i >= 0 && i < n {
			p.Weeks[i] = w
		}
	}
	if p.Fixes, err = s.store.FixResults(ctx, m.MerchantID); err != nil {
		return Progress{}, err
	}
	return p, nil
}
