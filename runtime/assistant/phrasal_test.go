package assistant

import (
	"slices"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// phrasalItems are a small staff handbook whose items name what phrasal verbs mean.
var phrasalItems = []Item{
	{ID: "clocking", Title: "Clocking in", Content: "Employees clock in on the tablet at the entrance when their shift starts."},
	{ID: "gym", Title: "Fitness room", Content: "Staff may exercise in the fitness room before or after their shift."},
	{ID: "payslips", Title: "Payslips", Content: "Payslips are emailed on the last Friday of the month."},
	{ID: "parking", Title: "Staff parking", Content: "Staff park behind the building; the barrier opens with your badge."},
}

// A verb with its particle is matched, for a share, to the words of the phrasal verb's meaning ("punch in" to
// "clock", "work out" to "exercise"), as an optional term: it counts for an item that has such a word but not
// against one that has none, as the question may mean another sense.
func TestSearchFindsPhrasalVerb(t *testing.T) {
	ix := NewIndex(phrasalItems)
	for q, want := range map[string]string{
		"how do I punch in":        "clocking",
		"where can staff work out": "gym",
	} {
		hits := ix.Search(q, 1)
		if len(hits) == 0 || hits[0].Item.ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
		}
	}
	q := ix.parseQuery("where can staff work out")
	exercise, _ := ix.stemID(lang.English.Stem("exercise"))
	i := slices.IndexFunc(q.terms, func(qt queryTerm) bool {
		return slices.ContainsFunc(qt.alts, func(a alt) bool { return a.id == exercise && a.factor == phrasalFactor })
	})
	if i < 0 || !q.terms[i].optional {
		t.Fatalf("parseQuery(where can staff work out) = %+v, want an optional term matching exercise", q.terms)
	}
	weight := 0.0
	for _, qt := range q.terms {
		if !qt.optional {
			weight += qt.idf
		}
	}
	if q.weight != weight || q.optional != q.terms[i].idf {
		t.Errorf("weights %v and %v, want %v and %v: the phrasal verb's meaning must be optional", q.weight, q.optional, weight, q.terms[i].idf)
	}
	if q := ix.parseQuery("work in the office"); slices.ContainsFunc(q.terms, func(qt queryTerm) bool { return qt.optional }) {
		t.Errorf("parseQuery(work in the office) = %+v: work in is no phrasal verb WordNet knows", q.terms)
	}
}
