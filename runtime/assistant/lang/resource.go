package lang

// Resource names a lexical resource of a language that the engine can be run without, to measure on the
// evaluation bases what it earns (make ablation; see docs/assistant.md).
type Resource string

// The resources a language may have. A language without one is unchanged by Without.
const (
	// Irregular is the table of irregular inflections stemmed as their lemmas ("spent" as "spend").
	Irregular Resource = "irregular"
	// Synonyms is the curated list of synonyms (see synonyms.go).
	Synonyms Resource = "synonyms"
	// Derived is the table of words derived from the same root ("pregnant", "pregnancy").
	Derived Resource = "derived"
	// Phrasal is the table of phrasal verbs' meanings ("work out": "exercise").
	Phrasal Resource = "phrasal"
	// Frequencies is the frequency list: without it, every word is rare and none is known to be spelt right.
	Frequencies Resource = "wordfreq"
	// Idioms are the idioms rewritten into the words help pages use ("money back": "refund").
	Idioms Resource = "idioms"
	// AnswerTypes are the answer types: the markers indexed with the values of a type and put in after the
	// phrases that ask for one ("how long").
	AnswerTypes Resource = "answertypes"
	// Compounds is the splitting of compounds written as one word and the infinitives with "zu" (German).
	Compounds Resource = "compounds"
	// OtherForms is the other form of a word its stemmer stems apart (German "Kurs", "Kurse").
	OtherForms Resource = "otherforms"
	// Story is the telling apart of the clauses that tell what happened from those that ask (StoryWords).
	Story Resource = "story"
)

// Resources lists every resource, in the order the ablation reports them.
var Resources = []Resource{Irregular, Synonyms, Derived, Phrasal, Frequencies,
	Idioms, AnswerTypes, Compounds, OtherForms, Story}

// Without returns a copy of the language without the resources rs. The language itself is left as it is: the
// languages are shared by every index.
func (l *Language) Without(rs ...Resource) *Language {
	c := *l
	for _, r := range rs {
		c.drop(r)
	}
	return &c
}

// drop removes one resource from c, a copy of a language.
func (c *Language) drop(r Resource) {
	switch r {
	case Irregular:
		c.lemma = nil
	case Synonyms:
		c.synonyms = nil
	case Derived:
		c.derived = nil
	case Phrasal:
		c.phrasal = nil
	case Frequencies:
		c.rarity = func(string) (float64, bool) { return 1, false }
	case Idioms:
		c.idioms = keepIdioms(c.idioms, func(id idiom) bool { return id.replace == "" })
	case AnswerTypes:
		c.idioms = keepIdioms(c.idioms, func(id idiom) bool { return id.mark == "" })
		c.noAnswerTypes = true
	case Compounds:
		c.compounds = nil
	case OtherForms:
		c.otherForm = nil
	case Story:
		c.askingWords = nil
	}
}

// keepIdioms returns the idioms keep keeps, in a new slice.
func keepIdioms(idioms []idiom, keep func(idiom) bool) []idiom {
	var out []idiom
	for _, id := range idioms {
		if keep(id) {
			out = append(out, id)
		}
	}
	return out
}
