// Package storeutil holds what the SQL stores share so that they read and write the same way: page sizes and
// pagination cursors, the row loop of listings, time and source encodings, and question normalisation.
package storeutil

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/parley-dev/parley/internal/jsonenc"
	"github.com/parley-dev/parley/runtime/store"
)

// Page sizes of the listings.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Listing kinds bound into cursors, so that a cursor of one listing is refused by another.
const (
	KindConversations = "conversations"
	KindKnowledge     = "knowledge"
)

// PageSize turns a filter's Limit into the page size: 0 or less means DefaultLimit, more than MaxLimit means
// MaxLimit.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	default:
		return limit
	}
}

// Cursor is the position after which a listing continues: the creation time (unix milliseconds) and ID of
// the last item returned, bound to a listing kind and a merchant.
type Cursor struct {
	Kind       string
	MerchantID string
	CreatedAt  int64
	ID         string
}

// cursorVersion is the version of the encoded cursor format.
const cursorVersion = 1

type cursorJSON struct {
	V int    `json:"v"`
	K string `json:"k"`
	M string `json:"m"`
	T int64  `json:"t"`
	I string `json:"i"`
}

// EncodeCursor returns the opaque form of c.
func EncodeCursor(c Cursor) string {
	b, err := json.Marshal(cursorJSON{V: cursorVersion, K: c.Kind, M: c.MerchantID, T: c.CreatedAt, I: c.ID})
	if err != nil { // cannot happen: the struct holds only strings and integers
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses s and checks that it was issued for this listing kind and merchant. Any failure is
// store.ErrInvalidCursor.
func DecodeCursor(s, kind, merchantID string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, store.ErrInvalidCursor
	}
	var c cursorJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return Cursor{}, store.ErrInvalidCursor
	}
	if c.V != cursorVersion || c.K != kind || c.M != merchantID || c.I == "" {
		return Cursor{}, store.ErrInvalidCursor
	}
	return Cursor{Kind: c.K, MerchantID: c.M, CreatedAt: c.T, ID: c.I}, nil
}

// Page cuts a listing fetched with one row more than size into the page and the cursor of the next one ("" on
// the last page). key gives an item's creation time and ID.
func Page[T any](list []T, size int, kind, merchantID string, key func(T) (time.Time, string)) ([]T, string) {
	if len(list) <= size {
		return list, ""
	}
	list = list[:size]
	at, id := key(list[size-1])
	return list, EncodeCursor(Cursor{Kind: kind, MerchantID: merchantID, CreatedAt: Millis(at), ID: id})
}

// NormalizeQuestion lower-cases s, removes punctuation and collapses white space, so that the same question
// asked differently is counted once.
func NormalizeQuestion(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // white space since the last word written
	for _, r := range s {
		switch {
		case unicode.IsPunct(r):
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// ContainsFold reports whether needle is a substring of haystack, ignoring case.
func ContainsFold(haystack, needle string) bool {
	return strings.Contains(strings.ToLower(haystack), strings.ToLower(needle))
}

// Month is the key of t's UTC month, "YYYY-MM".
func Month(t time.Time) string {
	return t.UTC().Format("2006-01")
}

// Millis converts t to unix milliseconds.
func Millis(t time.Time) int64 {
	return t.UnixMilli()
}

// FromMillis converts unix milliseconds to a UTC time.
func FromMillis(ms int64) time.Time {
	return time.UnixMilli(ms).UTC()
}

// Day is the UTC date, "YYYY-MM-DD", of unix milliseconds.
func Day(ms int64) string {
	return FromMillis(ms).Format(time.DateOnly)
}

// Listing kinds of leads and deliveries.
const (
	KindLeads      = "leads"
	KindDeliveries = "deliveries"
)

// sourceJSON is the stored form of a store.Source.
type sourceJSON struct {
	KnowledgeID string  `json:"knowledge_id"`
	Title       string  `json:"title,omitempty"`
	URL         string  `json:"url,omitempty"`
	Snippet     string  `json:"snippet,omitempty"`
	Score       float64 `json:"score"`
}

// EncodeSources returns the stored form of a message's sources: a JSON array, "[]" when there are none, as
// json.Marshal writes a []sourceJSON, built without its reflection (a chat exchange encodes two).
func EncodeSources(sources []store.Source) (string, error) {
	if len(sources) == 0 {
		return "[]", nil
	}
	size := 2 // the text's length, unless some of it needs escaping: one allocation
	for _, s := range sources {
		size += len(s.KnowledgeID) + len(s.Title) + len(s.URL) + len(s.Snippet) + 80 // names, quotes, score
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, s := range sources {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"knowledge_id":`...)
		b = jsonenc.AppendString(b, s.KnowledgeID)
		if s.Title != "" {
			b = append(b, `,"title":`...)
			b = jsonenc.AppendString(b, s.Title)
		}
		if s.URL != "" {
			b = append(b, `,"url":`...)
			b = jsonenc.AppendString(b, s.URL)
		}
		if s.Snippet != "" {
			b = append(b, `,"snippet":`...)
			b = jsonenc.AppendString(b, s.Snippet)
		}
		b = append(b, `,"score":`...)
		var err error
		if b, err = jsonenc.AppendFloat(b, s.Score); err != nil {
			return "", fmt.Errorf("encoding sources: %w", err)
		}
		b = append(b, '}')
	}
	return string(append(b, ']')), nil
}

// DecodeSources parses the stored form of a message's sources; an empty array is nil.
func DecodeSources(text string) ([]store.Source, error) {
	var in []sourceJSON
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		return nil, fmt.Errorf("decoding sources: %w", err)
	}
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]store.Source, 0, len(in))
	for _, s := range in {
		out = append(out, store.Source(s))
	}
	return out, nil
}

// Rows is a result set: *sql.Rows and pgx.Rows both are.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Scanner is one row: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows all are.
type Scanner interface {
	Scan(dest ...any) error
}

// Collect reads every row with scan. The caller closes rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var list []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

// Compute runs the steps of a computation that reads several queries into its result, in order, in one read
// transaction (read runs its function in one), and stops at the first error, which it wraps with what.
func Compute[Tx, In, Out any](ctx context.Context, read func(context.Context, func(Tx) error) error, what string, in In, steps ...func(context.Context, Tx, In, *Out) error) (Out, error) {
	var out Out
	err := read(ctx, func(tx Tx) error {
		for _, step := range steps {
			if err := step(ctx, tx, in, &out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var zero Out
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Keyed is what listings hold: things ordered, newest first, by creation time and then ID.
type Keyed interface {
	Key() (time.Time, string)
}

// ListPage reads one page of a listing. It decodes the cursor, which must have been issued for this listing kind
// and merchant (store.ErrInvalidCursor otherwise); fetch reads up to n items after it (nil: from the newest), one
// more than the page holds, so that the page's cursor is given only when another page follows.
func ListPage[T Keyed](kind, merchantID string, limit int, cursor string, fetch func(after *Cursor, n int) ([]T, error)) ([]T, string, error) {
	var after *Cursor
	if cursor != "" {
		c, err := DecodeCursor(cursor, kind, merchantID)
		if err != nil {
			return nil, "", fmt.Errorf("listing %s: %w", kind, err)
		}
		after = &c
	}
	size := PageSize(limit)
	list, err := fetch(after, size+1)
	if err != nil {
		return nil, "", fmt.Errorf("listing %s: %w", kind, err)
	}
	page, next := Page(list, size, kind, merchantID, T.Key)
	return page, next, nil
}

// ExchangeSources returns the stored form of the sources of an exchange's question and answer.
func ExchangeSources(ex store.Exchange) (question, answer string, err error) {
	if question, err = EncodeSources(ex.Question.Sources); err != nil {
		return "", "", fmt.Errorf("message %s: %w", ex.Question.ID, err)
	}
	if answer, err = EncodeSources(ex.Answer.Sources); err != nil {
		return "", "", fmt.Errorf("message %s: %w", ex.Answer.ID, err)
	}
	return question, answer, nil
}

// ScanQuestionCount reads a question and its count.
func ScanQuestionCount(row Scanner) (store.QuestionCount, error) {
	var q store.QuestionCount
	err := row.Scan(&q.Question, &q.Count)
	return q, err
}

// WithSources returns the message with its sources decoded from their stored form.
func WithSources(m store.Message, stored string) (store.Message, error) {
	sources, err := DecodeSources(stored)
	if err != nil {
		return store.Message{}, fmt.Errorf("reading sources of message %s: %w", m.ID, err)
	}
	m.Sources = sources
	return m, nil
}

// StreamLimit is the number of stream events a read returns for the limit asked: 1 to 1000, 100 for 0.
func StreamLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return n
}
