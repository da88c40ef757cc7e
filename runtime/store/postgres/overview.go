package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// topQuestions is how many questions the overview's rankings hold.
const topQuestions = 10

// Overview computes the merchant's analytics for conversations created in [from, to), from one snapshot.
func (s *Store) Overview(ctx context.Context, merchantID string, from, to time.Time) (store.Overview, error) {
	return storeutil.Compute(ctx, s.read, "computing overview", overviewRange{merchantID: merchantID, from: stamp(from), to: stamp(to)},
		overviewTotals, overviewAnswers, overviewTopQuestions, overviewUnansweredQuestions, overviewDaily, overviewLeads, overviewHandoffs)
}

// overviewHandoffs counts the conversations handed to a person, those the team answered and how soon, and those
// the assistant resolved alone.
func overviewHandoffs(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	var avgMillis float64
	err := tx.QueryRow(ctx, `
		SELECT COUNT(*) FILTER (WHERE c.handoff_at IS NOT NULL), COUNT(*) FILTER (WHERE c.agent_reply_at >= c.handoff_at),
			COALESCE(EXTRACT(EPOCH FROM AVG(c.agent_reply_at - c.handoff_at) FILTER (WHERE c.agent_reply_at >= c.handoff_at)) * 1000, 0)::float8,
			COUNT(*) FILTER (WHERE c.handoff_at IS NULL AND c.unanswered = 0)
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
	from, to   time.Time
}

func (r overviewRange) args(more ...any) []any {
	return append([]any{r.merchantID, r.from, r.to}, more...)
}

// inRange restricts conversations c to the range; its arguments are overviewRange.args, $1 to $3.
const inRange = `c.merchant_id = $1 AND c.created_at >= $2 AND c.created_at < $3`

// joinInRange joins messages m to their conversation c.
const joinInRange = `messages m JOIN conversations c ON c.merchant_id = m.merchant_id AND c.id = m.conversation_id`

// overviewLeads counts the leads captured in the range.
func overviewLeads(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM leads WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3`,
		r.args()...).Scan(&o.Leads)
	if err != nil {
		return fmt.Errorf("counting leads: %w", err)
	}
	return nil
}

// overviewTotals counts conversations, messages and visitors; a conversation without a visitor ID is one visitor.
func overviewTotals(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	err := tx.QueryRow(ctx, `
		SELECT COUNT(*), COALESCE(SUM(c.message_count), 0),
			COUNT(DISTINCT NULLIF(c.visitor_id, '')) + COUNT(*) FILTER (WHERE c.visitor_id = '')
		FROM conversations c WHERE `+inRange, r.args()...).Scan(&o.Conversations, &o.Messages, &o.Visitors)
	if err != nil {
		return fmt.Errorf("counting conversations: %w", err)
	}
	return nil
}

// overviewAnswers counts the assistant messages that answered and those that could not, and their model tokens.
func overviewAnswers(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	err := tx.QueryRow(ctx, `
		SELECT COUNT(*) FILTER (WHERE m.answered), COUNT(*) FILTER (WHERE NOT m.answered), COALESCE(SUM(m.tokens), 0)::bigint
		FROM `+joinInRange+` WHERE m.role = 'assistant' AND `+inRange, r.args()...).
		Scan(&o.AnsweredMessages, &o.UnansweredMessages, &o.ModelTokens)
	if err != nil {
		return fmt.Errorf("counting answers: %w", err)
	}
	return nil
}

func overviewTopQuestions(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	var err error
	o.TopQuestions, err = questionCounts(ctx, tx, `
		SELECT m.normalized, COUNT(*) AS n FROM `+joinInRange+`
		WHERE m.role = 'visitor' AND m.normalized <> '' AND `+inRange+`
		GROUP BY m.normalized ORDER BY n DESC, m.normalized LIMIT $4`, r.args(topQuestions)...)
	if err != nil {
		return fmt.Errorf("ranking questions: %w", err)
	}
	return nil
}

// overviewUnansweredQuestions ranks the visitor questions whose reply could not answer.
func overviewUnansweredQuestions(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	var err error
	o.UnansweredQuestions, err = questionCounts(ctx, tx, `
		SELECT q.normalized, COUNT(*) AS n FROM `+joinInRange+`
		JOIN messages q ON q.merchant_id = m.merchant_id AND q.conversation_id = m.conversation_id AND q.id = m.reply_to
		WHERE m.role = 'assistant' AND NOT m.answered AND q.normalized <> '' AND `+inRange+`
		GROUP BY q.normalized ORDER BY n DESC, q.normalized LIMIT $4`, r.args(topQuestions)...)
	if err != nil {
		return fmt.Errorf("ranking unanswered questions: %w", err)
	}
	return nil
}

// questionCounts reads a ranking of questions.
func questionCounts(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]store.QuestionCount, error) {
	return queryList(ctx, tx, query, args, storeutil.ScanQuestionCount)
}

// overviewDaily counts conversations and their messages per UTC day of creation, oldest first.
func overviewDaily(ctx context.Context, tx pgx.Tx, r overviewRange, o *store.Overview) error {
	rows, err := tx.Query(ctx, `
		SELECT to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, COUNT(*), SUM(c.message_count),
			COUNT(*) FILTER (WHERE c.handoff_at IS NOT NULL)
		FROM conversations c WHERE `+inRange+` GROUP BY day ORDER BY day`, r.args()...)
	if err != nil {
		return fmt.Errorf("counting days: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d store.DayCount
		if err := rows.Scan(&d.Date, &d.Conversations, &d.Messages, &d.Handoffs); err != nil {
			return fmt.Errorf("counting days: %w", err)
		}
		o.Daily = append(o.Daily, d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("counting days: %w", err)
	}
	return nil
}
