package assistant

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// BenchmarkAblation is what each lexical resource and heuristic earns: the held-out parts of the demo shop and of
// every evaluation base, as written, with their listed questions and with their tuning misses fixed from the
// review queue (see BenchmarkQuality), answered with everything and then without each resource or heuristic in
// turn (Options). It prints, for each, the change in answerable questions answered from their item (top-1) and in
// unanswerable ones declined, base by base over the three forms, their sum over the held-out parts and over the
// tuning parts, and how many held-out questions it changes at all (answered from another item, or declined with
// another item first). A resource whose removal costs nothing held out does not earn its place (docs/assistant.md).
//
//	make ablation
func BenchmarkAblation(b *testing.B) {
	sets := []ablationBase{{name: "acme", items: fixtureItems(b), holdout: holdoutQuestions(b), tune: fixtureQuestions(b)}}
	for _, qb := range qualityBases {
		items := baseItems(b, qb.name)
		tune, holdout := baseQuestions(b, qb.name, "tune"), baseQuestions(b, qb.name, "holdout")
		sets = append(sets, ablationBase{name: qb.name, locale: qb.locale, items: items, tune: tune, holdout: holdout,
			curated: curatedItems(b, qb.name)})
	}
	type setting struct {
		name string
		opts Options
	}
	settings := []setting{{name: "everything"}}
	for _, r := range lang.Resources {
		settings = append(settings, setting{name: "-" + string(r), opts: Options{WithoutResources: []lang.Resource{r}}})
	}
	for _, h := range Heuristics {
		settings = append(settings, setting{name: "-" + string(h), opts: Options{WithoutHeuristics: []Heuristic{h}}})
	}
	var table strings.Builder
	for b.Loop() {
		table.Reset()
		fmt.Fprintf(&table, "%-14s", "held out")
		for _, s := range sets {
			fmt.Fprintf(&table, " %12s", s.name)
		}
		fmt.Fprintf(&table, " %12s %12s %8s\n", "held out", "tuning", "changed")
		var all []ablationCount
		var allOutcomes [][]string
		for i, st := range settings {
			counts, holdout, tune := make([]ablationCount, len(sets)), ablationCount{}, ablationCount{}
			changed := 0
			for j, s := range sets {
				h, t, outcomes := s.measure(b, st.opts)
				counts[j] = h
				holdout, tune = holdout.plus(h), tune.plus(t)
				if i == 0 {
					allOutcomes = append(allOutcomes, outcomes)
					continue
				}
				for k, o := range outcomes {
					if o != allOutcomes[j][k] {
						changed++
					}
				}
			}
			counts = append(counts, holdout, tune)
			fmt.Fprintf(&table, "%-14s", st.name)
			for j, c := range counts {
				if i == 0 {
					fmt.Fprintf(&table, " %12s", c)
				} else {
					fmt.Fprintf(&table, " %12s", c.minus(all[j]).delta())
				}
			}
			fmt.Fprintf(&table, " %8d\n", changed)
			if i == 0 {
				all = counts
			}
		}
	}
	b.Log("answered from their item / declined, then the change without each (answered, declined):\n" + table.String())
}

// ablationBase is a knowledge base with its two parts of questions: the demo shop or an evaluation base.
type ablationBase struct {
	name, locale   string
	items, curated []Item
	tune, holdout  []fixtureQuestion
}

// measure returns the counts of the held-out and of the tuning part of the base, summed over its forms: as
// written, with its listed questions, and with its tuning misses fixed from the review queue; and the outcome of
// each held-out question in each form, to tell how many a resource changes at all.
func (s ablationBase) measure(tb testing.TB, opts Options) (holdout, tune ablationCount, outcomes []string) {
	bld := Builder{Options: opts}
	ix := bld.Build(s.items, s.locale)
	forms := []*Index{ix, bld.Build(fixedFromQueue(tb, ix, s.items, s.tune), s.locale)}
	if s.curated != nil {
		forms = append(forms, bld.Build(s.curated, s.locale))
	}
	for _, f := range forms {
		holdout = holdout.plus(countOf(runFixture(tb, f, s.holdout)))
		tune = tune.plus(countOf(runFixture(tb, f, s.tune)))
		for _, q := range s.holdout {
			outcomes = append(outcomes, outcome(tb, f, q.Q))
		}
	}
	return holdout, tune, outcomes
}

// outcome is what the offline assistant does with a question: the item it answers from, or declining with the
// item it ranks first.
func outcome(tb testing.TB, ix *Index, question string) string {
	reply, err := Retrieval{}.Respond(tb.Context(), Request{Message: question, Index: ix})
	if err != nil {
		tb.Fatal(err)
	}
	if reply.Kind == KindAnswer {
		return reply.Sources[0].KnowledgeID
	}
	first := ""
	if hits := ix.Search(question, 1); len(hits) > 0 {
		first = hits[0].Item.ID
	}
	return string(reply.Kind) + " " + first
}

// ablationCount is how many answerable questions were answered from their item and how many unanswerable ones
// declined.
type ablationCount struct{ correct, declined int }

func countOf(a accuracy) ablationCount {
	return ablationCount{correct: a.correct, declined: a.declined}
}

func (c ablationCount) plus(d ablationCount) ablationCount {
	return ablationCount{correct: c.correct + d.correct, declined: c.declined + d.declined}
}

func (c ablationCount) minus(d ablationCount) ablationCount {
	return ablationCount{correct: c.correct - d.correct, declined: c.declined - d.declined}
}

func (c ablationCount) String() string { return fmt.Sprintf("%d/%d", c.correct, c.declined) }

// delta writes a change, "." for none.
func (c ablationCount) delta() string {
	if c == (ablationCount{}) {
		return "."
	}
	return fmt.Sprintf("%+d/%+d", c.correct, c.declined)
}
