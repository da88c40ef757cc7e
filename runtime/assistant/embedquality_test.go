//go:build integration

package assistant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/embedserver"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/embeddings"
)

// The evaluation bases (see quality_test.go) with the widget locale their index is built for.
var embedBases = []struct{ name, locale string }{
	{"dental", ""}, {"software", ""}, {"hotel", ""}, {"sprachschule", "de"}, {"bicycle", ""}, {"electronics", ""},
}

type evalQuestion struct {
	Q      string  `json:"q"`
	Expect *string `json:"expect"`
}

func loadBase(tb testing.TB, name string, v any) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "bases", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatal(err)
	}
}

// score is one part's outcome: answerable questions answered from their item (top-1), unanswerable ones
// declined, and answerable ones whose item is among the first five hits (recall@5).
type score struct{ answerable, top1, recall, unanswerable, declined int }

func (s score) String() string {
	return fmt.Sprintf("top-1 %d/%d = %.3f; recall@5 %d/%d = %.3f; declined %d/%d", s.top1, s.answerable,
		float64(s.top1)/float64(s.answerable), s.recall, s.answerable, float64(s.recall)/float64(s.answerable), s.declined, s.unanswerable)
}

// BenchmarkQualityEmbeddings measures every evaluation base's tuning and held-out parts with words alone and
// with words fused with a real sentence encoder's embeddings (Google's Universal Sentence Encoder lite, served by
// hack/embedserver behind /v1/embeddings): top-1, recall@5 and declines. Run by `make quality-embeddings`.
func BenchmarkQualityEmbeddings(b *testing.B) {
	srv := embedserver.Start(b)
	c, err := embeddings.New(embeddings.Config{BaseURL: srv.BaseURL, Model: embedserver.Model, BatchSize: 32})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, base := range embedBases {
		var raw []struct {
			ID, Title, Content string
			Tags               []string
		}
		loadBase(b, base.name+"_items", &raw)
		items := make([]assistant.Item, len(raw))
		for i, r := range raw {
			items[i] = assistant.Item{ID: r.ID, Title: r.Title, Content: r.Content, Tags: r.Tags}
			res, err := c.Embed(ctx, assistant.EmbeddingTexts(items[i]))
			if err != nil {
				b.Fatal(err)
			}
			items[i].Vectors = res.Vectors
		}
		ix := assistant.NewIndexForLocale(items, base.locale)
		for _, part := range []string{"tune", "holdout"} {
			var qs []evalQuestion
			loadBase(b, base.name+"_"+part, &qs)
			texts := make([]string, len(qs))
			for i, q := range qs {
				texts[i] = q.Q
			}
			res, err := c.Embed(ctx, texts)
			if err != nil {
				b.Fatal(err)
			}
			var words, fused score
			for i, q := range qs {
				words.add(b, ix, q, nil)
				fused.add(b, ix, q, res.Vectors[i])
			}
			b.Run(base.name+"/"+part, func(b *testing.B) {
				for b.Loop() {
				}
				b.Logf("words: %v", words)
				b.Logf("fused: %v", fused)
				b.ReportMetric(float64(words.recall)/float64(words.answerable), "words-recall@5")
				b.ReportMetric(float64(fused.recall)/float64(fused.answerable), "fused-recall@5")
				b.ReportMetric(float64(words.top1)/float64(words.answerable), "words-top1")
				b.ReportMetric(float64(fused.top1)/float64(fused.answerable), "fused-top1")
			})
		}
	}
}

// add scores question q searched with vector (nil: words alone).
func (s *score) add(tb testing.TB, ix *assistant.Index, q evalQuestion, vector []float32) {
	reply, err := assistant.Retrieval{}.Respond(context.Background(), assistant.Request{Message: q.Q, Index: ix, QueryVector: vector})
	if err != nil {
		tb.Fatal(err)
	}
	if q.Expect == nil {
		s.unanswerable++
		if reply.Kind == assistant.KindFallback {
			s.declined++
		}
		return
	}
	s.answerable++
	if reply.Kind == assistant.KindAnswer && reply.Sources[0].KnowledgeID == *q.Expect {
		s.top1++
	}
	if slices.ContainsFunc(ix.SearchWith(q.Q, vector, 5), func(h assistant.Hit) bool { return h.Item.ID == *q.Expect }) {
		s.recall++
	}
}
