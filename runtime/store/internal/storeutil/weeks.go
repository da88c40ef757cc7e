package storeutil

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// weekMillis is a week in milliseconds, and mondayMillis the first Monday after the Unix epoch (1970-01-05), from
// which weeks are counted.
const (
	weekMillis   = 7 * 24 * 3600 * 1000
	mondayMillis = 4 * 24 * 3600 * 1000
)

// week is the SQL of the number of the UTC week (from Monday) of a time column, the same integer in both stores.
func (l Reads) week(column string) string {
	return "((" + l.Dialect.Millis(column) + " - " + fmt.Sprint(mondayMillis) + ") / " + fmt.Sprint(weekMillis) + ")"
}

// FeedbackWeeks counts each UTC week's answers, ratings and conversation ratings in [from, to), from one snapshot:
// the answers of the conversations created in the range (conversations_by_created), the ratings given in it
// (answer_ratings_by_updated, conversation_ratings_by_updated).
func (l Reads) FeedbackWeeks(ctx context.Context, merchantID string, from, to time.Time) ([]store.FeedbackWeek, error) {
	weeks := map[int64]*store.FeedbackWeek{}
	at := func(n int64) *store.FeedbackWeek {
		if weeks[n] == nil {
			weeks[n] = &store.FeedbackWeek{Start: FromMillis(mondayMillis + n*weekMillis)}
		}
		return weeks[n]
	}
	type count struct {
		week int64
		a, b int
	}
	scan := func(row Scanner) (count, error) {
		var c count
		err := row.Scan(&c.week, &c.a, &c.b)
		return c, err
	}
	err := l.Snapshot(ctx, func(q QueryFunc) error {
		w := NewWhere(l.Dialect)
		w.Add("c.merchant_id = ? AND c.created_at >= ? AND c.created_at < ?", merchantID, from, to)
		w.Add("m.role = ?", string(store.RoleAssistant))
		answers, err := QueryList(ctx, q, `SELECT `+l.week("m.created_at")+` AS wk,
			SUM(CASE WHEN m.answered THEN 1 ELSE 0 END), SUM(CASE WHEN m.answered THEN 0 ELSE 1 END)
			FROM conversations c JOIN messages m ON m.merchant_id = c.merchant_id AND m.conversation_id = c.id
			WHERE `+w.String()+` GROUP BY wk`, w.Args, scan)
		if err != nil {
			return fmt.Errorf("counting answers: %w", err)
		}
		for _, c := range answers {
			at(c.week).Answered, at(c.week).Unanswered = c.a, c.b
		}
		w = NewWhere(l.Dialect)
		w.Add("r.merchant_id = ? AND r.updated_at >= ? AND r.updated_at < ?", merchantID, from, to)
		ratings, err := QueryList(ctx, q, `SELECT `+l.week("r.updated_at")+` AS wk, COUNT(*),
			SUM(CASE WHEN r.rating = 'down' THEN 1 ELSE 0 END) FROM answer_ratings r WHERE `+w.String()+` GROUP BY wk`, w.Args, scan)
		if err != nil {
			return fmt.Errorf("counting ratings: %w", err)
		}
		for _, c := range ratings {
			at(c.week).Rated, at(c.week).ThumbsDown = c.a, c.b
		}
		w = NewWhere(l.Dialect)
		w.Add("s.merchant_id = ? AND s.updated_at >= ? AND s.updated_at < ?", merchantID, from, to)
		surveys, err := QueryList(ctx, q, `SELECT `+l.week("s.updated_at")+` AS wk, COUNT(*),
			SUM(CASE WHEN s.score >= `+fmt.Sprint(store.Satisfied)+` THEN 1 ELSE 0 END)
			FROM conversation_ratings s WHERE `+w.String()+` GROUP BY wk`, w.Args, scan)
		if err != nil {
			return fmt.Errorf("counting conversation ratings: %w", err)
		}
		for _, c := range surveys {
			at(c.week).Surveys, at(c.week).Satisfied = c.a, c.b
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the weeks of merchant %s: %w", merchantID, err)
	}
	out := make([]store.FeedbackWeek, 0, len(weeks))
	for _, w := range weeks {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b store.FeedbackWeek) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// FixResults counts, for each review fix, the visitor questions of that normalized text asked after it, and those
// of them answered, among the conversations that went on after it.
func (l Reads) FixResults(ctx context.Context, merchantID string) ([]store.FixResult, error) {
	w := NewWhere(l.Dialect)
	w.Add("f.merchant_id = ?", merchantID)
	results, err := QueryList(ctx, l.Query, `SELECT f.merchant_id, f.question, f.knowledge_id, `+l.Dialect.Millis("f.fixed_at")+`,
		(SELECT COUNT(*) FROM conversations c JOIN messages q ON q.merchant_id = c.merchant_id AND q.conversation_id = c.id
			WHERE c.merchant_id = f.merchant_id AND c.updated_at > f.fixed_at AND q.normalized = f.question AND q.created_at > f.fixed_at),
		(SELECT COUNT(*) FROM conversations c JOIN messages q ON q.merchant_id = c.merchant_id AND q.conversation_id = c.id
			JOIN messages a ON a.merchant_id = q.merchant_id AND a.conversation_id = q.conversation_id AND a.reply_to = q.id
			WHERE c.merchant_id = f.merchant_id AND c.updated_at > f.fixed_at AND q.normalized = f.question AND q.created_at > f.fixed_at
			AND a.answered)
		FROM review_fixes f WHERE `+w.String()+` ORDER BY f.fixed_at DESC, f.question`, w.Args, func(row Scanner) (store.FixResult, error) {
		var (
			r  store.FixResult
			at int64
		)
		if err := row.Scan(&r.MerchantID, &r.Question, &r.KnowledgeID, &at, &r.Asked, &r.Answered); err != nil {
			return store.FixResult{}, fmt.Errorf("reading a fix's result: %w", err)
		}
		r.FixedAt = FromMillis(at)
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the fixes' results: %w", err)
	}
	return results, nil
}
