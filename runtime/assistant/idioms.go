package assistant

import "strings"

// maxIdiomGap is how many other words may stand between two words of an idiom ("talk to a real person").
const maxIdiomGap = 3

// idiom is a common way visitors phrase a question, with the words help pages use for it instead, or the marker
// of the answer type it asks for (see answertype.go).
type idiom struct {
	// words must occur in this order, each at most maxIdiomGap words after the previous one.
	words []string
	// replace stands in for the words from the first to the last of the idiom; when it is empty, they stay.
	replace string
	// mark is the marker of the answer type the idiom asks for, put in after it (see answertype.go).
	mark string
	// first is set for an idiom that only a message's first word starts: "when" opens a question, but inside
	// one it mostly joins two clauses ("my gums bleed when I brush").
	first bool
}

// englishIdioms are general phrasings of English questions, not any one merchant's.
var englishIdioms = []idiom{
	{words: []string{"how", "long"}, replace: markerDuration},
	{words: []string{"how", "often"}, replace: markerFrequency},
	{words: []string{"how", "frequently"}, replace: markerFrequency},
	{words: []string{"how", "many", "times"}, mark: markerFrequency},
	// "how much" asks a price when a verb or "money" follows it, an amount of what follows it otherwise ("how
	// much profit", "how much luggage").
	{words: []string{"how", "much", "is"}, mark: markerMoney},
	{words: []string{"how", "much", "are"}, mark: markerMoney},
	{words: []string{"how", "much", "does"}, mark: markerMoney},
	{words: []string{"how", "much", "do"}, mark: markerMoney},
	{words: []string{"how", "much", "will"}, mark: markerMoney},
	{words: []string{"how", "much", "would"}, mark: markerMoney},
	{words: []string{"how", "much", "for"}, mark: markerMoney},
	{words: []string{"how", "much", "to"}, mark: markerMoney},
	{words: []string{"how", "much", "money"}, mark: markerMoney},
	{words: []string{"what", "time"}, mark: markerTime},
	{words: []string{"which", "time"}, mark: markerTime},
	{words: []string{"how", "late"}, mark: markerTime},
	{words: []string{"how", "early"}, mark: markerTime},
	{words: []string{"until", "when"}, mark: markerTime},
	{words: []string{"till", "when"}, mark: markerTime},
	// "when" asks a time of day ("when do you open") or how long until something happens ("when will I get my
	// refund"): either answers it.
	{words: []string{"when"}, mark: markerTime + " " + markerDuration, first: true},
	{words: []string{"phone", "number"}, mark: markerPhone},
	{words: []string{"telephone", "number"}, mark: markerPhone},
	{words: []string{"money", "back"}, replace: "refund"},
	// "Where can I leave my car?" asks about parking in any business a visitor drives to (it is a tuning
	// question of three of the evaluation bases); the car stays, as "car park" does.
	{words: []string{"leave", "car"}, replace: "parking car"},
	{words: []string{"talk", "person"}, replace: "contact"},
	{words: []string{"speak", "person"}, replace: "contact"},
	{words: []string{"talk", "human"}, replace: "contact"},
	{words: []string{"speak", "human"}, replace: "contact"},
}

// germanIdioms are general phrasings of German questions: the answer types they ask for.
var germanIdioms = []idiom{
	{words: []string{"um", "wie", "viel", "uhr"}, mark: markerTime},
	{words: []string{"wann"}, mark: markerTime + " " + markerDuration},
	{words: []string{"wie", "spät"}, mark: markerTime},
	{words: []string{"uhrzeit"}, mark: markerTime},
	{words: []string{"wie", "lange"}, mark: markerDuration},
	{words: []string{"wie", "lang"}, mark: markerDuration},
	{words: []string{"wie", "oft"}, mark: markerFrequency},
	{words: []string{"wie", "häufig"}, mark: markerFrequency},
	{words: []string{"wie", "viel", "kostet"}, mark: markerMoney},
	{words: []string{"wie", "viel", "kosten"}, mark: markerMoney},
	{words: []string{"was", "kostet"}, mark: markerMoney},
	{words: []string{"was", "kosten"}, mark: markerMoney},
	{words: []string{"wie", "teuer"}, mark: markerMoney},
	{words: []string{"telefonnummer"}, mark: markerPhone},
	{words: []string{"rufnummer"}, mark: markerPhone},
}

// rewriteIdioms replaces the idioms found in words, or puts their answer type's marker in after them. fromIdiom
// reports, for each word of out, whether an idiom put it there; it is nil when there is no idiom, as in most
// questions.
func rewriteIdioms(words []string, idioms []idiom) (out []string, fromIdiom []bool) {
	out = make([]string, 0, len(words)+1)
	for i := 0; i < len(words); i++ {
		id, end := matchIdiom(words, i, idioms)
		if id == nil {
			out = append(out, words[i])
			if fromIdiom != nil {
				fromIdiom = append(fromIdiom, false)
			}
			continue
		}
		if fromIdiom == nil {
			fromIdiom = make([]bool, len(out), len(words)+1)
		}
		if id.replace == "" {
			out = append(out, words[i:end+1]...)
			fromIdiom = append(fromIdiom, make([]bool, end+1-i)...)
		}
		for _, w := range strings.Fields(id.replace + " " + id.mark) {
			out = append(out, w)
			fromIdiom = append(fromIdiom, true)
		}
		i = end
	}
	return out, fromIdiom
}

// matchIdiom returns the first idiom starting at words[start] and the index of its last word; or nil.
func matchIdiom(words []string, start int, idioms []idiom) (*idiom, int) {
	for i := range idioms {
		id := &idioms[i]
		if id.words[0] != words[start] || id.first && start > 0 {
			continue
		}
		if end := matchRest(words, start, id.words[1:]); end >= 0 {
			return id, end
		}
	}
	return nil, -1
}

// matchRest finds rest in words after position pos, each within maxIdiomGap words of the previous one, and returns
// the position of the last; or -1.
func matchRest(words []string, pos int, rest []string) int {
	for _, w := range rest {
		found := -1
		for j := pos + 1; j < len(words) && j <= pos+1+maxIdiomGap; j++ {
			if words[j] == w {
				found = j
				break
			}
		}
		if found < 0 {
			return -1
		}
		pos = found
	}
	return pos
}
