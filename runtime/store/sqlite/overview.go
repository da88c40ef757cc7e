package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// topQuestions is how many questions the overview's rankings hold.
const topQuestions = 10

// dayMillis is the length of a UTC day in milliseconds.
const dayMillis = 24 * 60 * 60 * 1000

// Overview computes the merchant's analytics for conversations created in [from, to), from one snapshot.
func (s *Store) Overview(ctx context.Context, merchantID string, from, to time.Time) (store.Overview, error) {
	return storeutil.Compute(ctx, s.read, "computing overview", overviewRange{merchantID: merchantID, from: storeutil.Millis(from), to: storeutil.Millis(to)},
		overviewTotals, overviewAnswers, overviewTopQuestions, overviewUnansweredQuestions, overviewDaily, overviewLeads, overviewHandoffs)
}

// overviewHandoffs counts the conversations handed to a person, those the team answered and how soon, and those
// the assistant resolved alone.
func overviewHandoffs(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	var avgMillis float64
	err := tx.QueryRowContext(ctx, `
		SELECT COALESCE(SUM(c.handoff_at > 0), 0), COALESCE(SUM(c.handoff_at > 0 AND c.agent_reply_at >= c.handoff_at), 0),
			COALESCE(AVG(CASE WHEN c.handoff_at > 0 AND c.agent_reply_at >= c.handoff_at THEN c.agent_reply_at - c.handoff_at END), 0),
			COALESCE(SUM(c.handoff_at = 0 AND c.unanswered = 0), 0)
		FROM conversations c WHERE `+inRange, r.args()...).Scan(&o.Handoffs, &o.HumanReplies, &avgMillis, &o.ResolvedByBot)
	if err != nil {
		return fmt.Errorf("counting handoffs: %w", err)
	}
	o.HumanReplyTime = time.Duration(avgMillis * float64(time.Millisecond))
	return nil
}

// overviewRange selects the conversations an overview covers.
type overviewRange struct {
	merchantID string
	from, to   int64
}

func (r overviewRange) args() []any { return []any{r.merchantID, r.from, r.to} }

// inRange restricts conversations c to the range; its arguments are overviewRange.args.
const inRange = `c.merchant_id = ? AND c.created_at >= ? AND c.created_at < ?`

// joinInRange joins messages m to their conversation c.
const joinInRange = `messages m JOIN conversations c ON c.merchant_id = m.merchant_id AND c.id = m.conversation_id`

// overviewTotals counts conversations, messages and visitors; a conversation without a visitor ID is one visitor.
func overviewTotals(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	err := tx.QueryRowContext(ctx, `
		SELECT COUNT(*), COALESCE(SUM(c.message_count), 0),
			COUNT(DISTINCT NULLIF(c.visitor_id, '')) + COALESCE(SUM(c.visitor_id = ''), 0)
		FROM conversations c WHERE `+inRange, r.args()...).Scan(&o.Conversations, &o.Messages, &o.Visitors)
	if err != nil {
		return fmt.Errorf("counting conversations: %w", err)
	}
	return nil
}

// overviewLeads counts the leads captured in the range.
func overviewLeads(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM leads WHERE merchant_id = ? AND created_at >= ? AND created_at < ?`,
		r.args()...).Scan(&o.Leads)
	if err != nil {
		return fmt.Errorf("counting leads: %w", err)
	}
	return nil
}

// overviewAnswers counts the assistant messages that answered and those that could not, and their model tokens.
func overviewAnswers(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	err := tx.QueryRowContext(ctx, `
		SELECT COALESCE(SUM(m.answered), 0), COALESCE(SUM(1 - m.answered), 0), COALESCE(SUM(m.tokens), 0)
		FROM `+joinInRange+` WHERE m.role = 'assistant' AND `+inRange, r.args()...).
		Scan(&o.AnsweredMessages, &o.UnansweredMessages, &o.ModelTokens)
	if err != nil {
		return fmt.Errorf("counting answers: %w", err)
	}
	return nil
}

func overviewTopQuestions(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	var err error
	o.TopQuestions, err = questionCounts(ctx, tx, `
		SELECT m.normalized, COUNT(*) AS n FROM `+joinInRange+`
		WHERE m.role = 'visitor' AND m.normalized <> '' AND `+inRange+`
		GROUP BY m.normalized ORDER BY n DESC, m.normalized LIMIT ?`, append(r.args(), topQuestions)...)
	if err != nil {
		return fmt.Errorf("ranking questions: %w", err)
	}
	return nil
}

// overviewUnansweredQuestions ranks the visitor questions whose reply could not answer.
func overviewUnansweredQuestions(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	var err error
	o.UnansweredQuestions, err = questionCounts(ctx, tx, `
		SELECT q.normalized, COUNT(*) AS n FROM `+joinInRange+`
		JOIN messages q ON q.merchant_id = m.merchant_id AND q.conversation_id = m.conversation_id AND q.id = m.reply_to
		WHERE m.role = 'assistant' AND m.answered = 0 AND q.normalized <> '' AND `+inRange+`
		GROUP BY q.normalized ORDER BY n DESC, q.normalized LIMIT ?`, append(r.args(), topQuestions)...)
	if err != nil {
		return fmt.Errorf("ranking unanswered questions: %w", err)
	}
	return nil
}

// questionCounts reads a ranking of questions.
func questionCounts(ctx context.Context, tx *txn, query string, args ...any) ([]store.QuestionCount, error) {
	return queryList(ctx, tx, query, args, storeutil.ScanQuestionCount)
}

// overviewDaily counts conversations and their messages per UTC day of creation, oldest first.
func overviewDaily(ctx context.Context, tx *txn, r overviewRange, o *store.Overview) error {
	rows, err := tx.QueryContext(ctx, `
		SELECT c.created_at - (c.created_at % ? + ?) % ? AS day, COUNT(*), SUM(c.message_count), SUM(c.handoff_at > 0)
		FROM conversations c WHERE `+inRange+` GROUP BY day ORDER BY day`,
		append([]any{dayMillis, dayMillis, dayMillis}, r.args()...)...)
	if err != nil {
		return fmt.Errorf("counting days: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			day int64
			d   store.DayCount
		)
		if err := rows.Scan(&day, &d.Conversations, &d.Messages, &d.Handoffs); err != nil {
			return fmt.Errorf("counting days: %w", err)
		}
		d.Date = storeutil.Day(day)
		o.Daily = append(o.Daily, d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("counting days: %w", err)
	}
	return nil
}
