package storeutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/parley-dev/parley/runtime/store"
)

func TestNormalizeQuestion(t *testing.T) {
	for in, want := range map[string]string{
		"What's the price?":           "whats the price",
		"  Où   est\tla boutique ?! ": "où est la boutique",
		"¿Qué?":                       "qué",
		"?!…":                         "",
		"100 € / month":               "100 € month",
	} {
		if got := NormalizeQuestion(in); got != want {
			t.Errorf("NormalizeQuestion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCursor(t *testing.T) {
	c := Cursor{Kind: KindKnowledge, MerchantID: "m1", CreatedAt: 1234, ID: "k1"}
	got, err := DecodeCursor(EncodeCursor(c), KindKnowledge, "m1")
	if err != nil || got != c {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, c)
	}
	for name, tc := range map[string]struct{ s, kind, merchant string }{
		"other kind":     {EncodeCursor(c), KindConversations, "m1"},
		"other merchant": {EncodeCursor(c), KindKnowledge, "m2"},
		"no ID":          {EncodeCursor(Cursor{Kind: KindKnowledge, MerchantID: "m1"}), KindKnowledge, "m1"},
		"not base64":     {"***", KindKnowledge, "m1"},
	} {
		if _, err := DecodeCursor(tc.s, tc.kind, tc.merchant); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s: error %v, want ErrInvalidCursor", name, err)
		}
	}
}

func TestPageSize(t *testing.T) {
	for limit, want := range map[int]int{-1: 20, 0: 20, 1: 1, 100: 100, 101: 100} {
		if got := PageSize(limit); got != want {
			t.Errorf("PageSize(%d) = %d, want %d", limit, got, want)
		}
	}
}

// numbered is a dialect with PostgreSQL's numbered, typed placeholders.
type numbered struct{}

func (numbered) Placeholder(n int, typ string) string { return fmt.Sprintf("$%d:%s", n, typ) }
func (numbered) Value(v any) any                      { return v }
func (numbered) ContainsFold(column string) string    { return "fold(" + column + ", ?)" }
func (numbered) HasTag(column string) string          { return "? IN " + column }
func (numbered) Millis(column string) string          { return column }

func TestQueries(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	yes := true
	after := &Cursor{CreatedAt: at.UnixMilli(), ID: "c9"}
	for _, tc := range []struct {
		name      string
		query     string
		args      []any
		wantQuery string
		wantArgs  []any
	}{
		{name: "conversations, every filter",
			query: must(ConversationsQuery(numbered{}, "m", after, store.ConversationFilter{From: at, To: at.AddDate(0, 1, 0), HasLead: &yes, Query: "kayak"}, 21)),
			args:  args(ConversationsQuery(numbered{}, "m", after, store.ConversationFilter{From: at, To: at.AddDate(0, 1, 0), HasLead: &yes, Query: "kayak"}, 21)),
			wantQuery: `SELECT ` + ConversationColumns + ` FROM conversations c WHERE c.merchant_id = $1:text AND ` +
				`(c.created_at, c.id) < ($2:timestamp, $3:text) AND c.created_at >= $4:timestamp AND ` +
				`c.created_at < $5:timestamp AND c.has_lead = $6:boolean AND EXISTS (SELECT 1 FROM messages m WHERE ` +
				`m.merchant_id = c.merchant_id AND m.conversation_id = c.id AND fold(m.text, $7:text)) ` +
				`ORDER BY c.created_at DESC, c.id DESC LIMIT $8:integer`,
			wantArgs: []any{"m", at, "c9", at, at.AddDate(0, 1, 0), true, "kayak", 21}},
		{name: "knowledge, no filter",
			query:     must(KnowledgeQuery(numbered{}, "m", nil, store.KnowledgeFilter{}, 5)),
			args:      args(KnowledgeQuery(numbered{}, "m", nil, store.KnowledgeFilter{}, 5)),
			wantQuery: `SELECT ` + KnowledgeColumns + ` FROM knowledge k WHERE k.merchant_id = $1:text ORDER BY k.created_at DESC, k.id DESC LIMIT $2:integer`,
			wantArgs:  []any{"m", 5}},
		{name: "knowledge, text, tag and drafts",
			query: must(KnowledgeQuery(numbered{}, "m", nil, store.KnowledgeFilter{Query: "a?b", Tag: "t", Draft: &yes}, 5)),
			args:  args(KnowledgeQuery(numbered{}, "m", nil, store.KnowledgeFilter{Query: "a?b", Tag: "t", Draft: &yes}, 5)),
			wantQuery: `SELECT ` + KnowledgeColumns + ` FROM knowledge k WHERE k.merchant_id = $1:text AND ` +
				`(fold(k.title, $2:text) OR fold(k.content, $3:text) OR fold(k.questions, $4:text)) AND $5:text IN k.tags ` +
				`AND k.draft = $6:boolean ORDER BY k.created_at DESC, k.id DESC LIMIT $7:integer`,
			wantArgs: []any{"m", "a?b", "a?b", "a?b", "t", true, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.query != tc.wantQuery {
				t.Errorf("query\n%s\nwant\n%s", tc.query, tc.wantQuery)
			}
			if !reflect.DeepEqual(tc.args, tc.wantArgs) {
				t.Errorf("args %v, want %v", tc.args, tc.wantArgs)
			}
		})
	}
}

func must(query string, _ []any) string { return query }
func args(_ string, args []any) []any   { return args }

// FuzzEncodeSources checks that EncodeSources writes the same JSON values as json.Marshal for the same sources,
// which is what the rows written before EncodeSources hold, and that DecodeSources reads them back.
func FuzzEncodeSources(f *testing.F) {
	f.Add("kn_1", "Shipping", "https://shop.example/shipping", "Orders ship <in> 2 days & \"free\".", 0.8125, 2)
	f.Add("", "", "", "", 0.0, 1)
	f.Add("kn_\xff", "\u2028", "", "\x00", 1e-7, 3)
	f.Fuzz(func(t *testing.T, id, title, url, snippet string, score float64, n int) {
		sources := make([]store.Source, n&3)
		for i := range sources {
			sources[i] = store.Source{KnowledgeID: id, Title: title, URL: url, Snippet: snippet, Score: score * float64(i+1)}
		}
		got, err := EncodeSources(sources)
		ref := make([]sourceJSON, 0, len(sources))
		for _, s := range sources {
			ref = append(ref, sourceJSON(s))
		}
		want, wantErr := json.Marshal(ref)
		var gotValue, wantValue any
		if (err != nil) != (wantErr != nil) || err == nil &&
			(json.Unmarshal([]byte(got), &gotValue) != nil || json.Unmarshal(want, &wantValue) != nil || !reflect.DeepEqual(gotValue, wantValue)) {
			t.Fatalf("got %s %v, want %s %v", got, err, want, wantErr)
		}
		if err == nil {
			if back, err := DecodeSources(got); err != nil || len(back) != len(sources) {
				t.Fatalf("%s read back as %d sources: %v", got, len(back), err)
			}
		}
	})
}

// FuzzNormalizeQuestion checks NormalizeQuestion's one pass against its definition: punctuation removed, lower
// case, the words joined by one space.
func FuzzNormalizeQuestion(f *testing.F) {
	for _, seed := range []string{"What's the price?", "  Où   est\tla boutique ?! ", "a . b", "\xff\xfe x", "İSTANBUL\u00a0\u2003 x", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		for _, r := range s {
			if !unicode.IsPunct(r) {
				b.WriteRune(unicode.ToLower(r))
			}
		}
		if got, want := NormalizeQuestion(s), strings.Join(strings.Fields(b.String()), " "); got != want {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}
