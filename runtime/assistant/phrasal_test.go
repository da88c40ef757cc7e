package assistant

import (
	"slices"
	"testing"
)

// The table is read by the stem of the verb and the particle; the commonest words of English in it are left out.
func TestParsePhrasal(t *testing.T) {
	got := parsePhrasal("# header\npunch_in clock\nworks_out elaborate exercise get\n")
	if c := got["punch"]["in"]; !slices.Equal(c, []string{"clock"}) {
		t.Errorf("punch in: %v, want [clock]", c)
	}
	if c := got[stem("working")]["out"]; !slices.Equal(c, []string{stem("elaborate"), stem("exercise")}) {
		t.Errorf("work out: %v, want the stems of elaborate and exercise", c)
	}
	if c := phrasalStems()["punch"]["in"]; !slices.Contains(c, "clock") {
		t.Errorf("embedded table: punch in means %v, want clock among them", c)
	}
	if c := phrasalStems()["work"]["out"]; !slices.Contains(c, stem("exercise")) {
		t.Errorf("embedded table: work out means %v, want exercise among them", c)
	}
	// "Sign up" for a club is a sense of its own in WordNet, a kind of joining.
	if c := phrasalStems()["sign"]["up"]; !slices.Contains(c, stem("join")) {
		t.Errorf("embedded table: sign up means %v, want join among them", c)
	}
}

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
	exercise, _ := ix.stemID(stem("exercise"))
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

// BenchmarkParsePhrasal measures reading the table of phrasal verbs, which a process does once.
func BenchmarkParsePhrasal(b *testing.B) {
	for b.Loop() {
		parsePhrasal(phrasalTable)
	}
}
