package lang

import (
	"strings"

	"github.com/kljensen/snowball/english"
)

// English is the default language. It has a frequency list, curated synonyms,
// irregular and derived forms and phrasal verbs; it writes compounds apart.
var English = &Language{
	stem:         stemSnowballEnglish,
	lemma:        lemma,
	stopWords:    englishStopWords,
	rarity:       generalRarity,
	clauseBreaks: []string{"and", "also", "plus"},
	askingWords: toSet(`can could will would shall should may might must is are am was were do does did have has
		had how what where when why which who whom whose any anyone anything wheres whats hows whens whos`),
	leadIns:     toSet(`so but and then just also ok okay well`),
	idioms:      englishIdioms,
	wordClasses: englishWordClasses,
	synonyms:    englishSynonyms,
	derived:     derivedStems,
	phrasal:     phrasalStems,
}

// stemEnglish reduces an English word to its Snowball stem. An irregular form is stemmed as its lemma (lemma), so
// that "spent" finds "spending" and "children" finds "child". A word Snowball would reduce by a final "-ant" keeps
// it, less a plural "s": the suffix makes another word ("accountant" is no "account", "assistant" no "assist",
// "important" no "import"). Conflated, "account" counted the items about the accountant as well and weighed
// too little for "is it safe to give you access to my bank account" to be answered. Derived forms (derivedStems)
// leave such pairs out: "accountant" matched to "account" answers "can you recommend an accountant near me".
func stemEnglish(word string) string { return stemSnowballEnglish(lemma(word)) }

// stemSnowballEnglish is stemEnglish of a word that is no irregular form.
func stemSnowballEnglish(word string) string {
	s := english.Stem(word, true)
	if singular := strings.TrimSuffix(word, "s"); singular == s+"ant" {
		return singular
	}
	return s
}

// englishStopWords are common English words, question words and chat filler that say nothing about the topic. Verbs
// such as "offer", "sell", "find" and "work" are not among them: they name what some businesses do ("we sell used
// bikes", "I found it cheaper elsewhere"). Keeping them changed nothing on the demo shop or the evaluation bases
// but one ranking, for the better: "I found the same tent cheaper somewhere else" finds the price match. The
// contractions visitors type without their apostrophe ("wheres", "hows") are stop words as their words are: taken
// for words the base lacks, they would count against every item.
var englishStopWords = toSet(`a about above after again against aint all also am an and any anyone anything are arent as
	at be because been before being below between both but by can cannot cant could couldnt couldve
	did didnt do does doesnt doing dont during each either else ever every few for from further
	get getting go going got gonna
	had hadnt has hasnt have havent having he hello her here heres hers herself hes hey hi him himself his how
	however hows i id if ill im in into is isnt it its itll itself ive just know let lets like looking may me might
	more most much many must mustnt my myself need needs neednt
	no nor not now of off oh ok okay on once one only or other ought our ours ourselves out over own
	please pls really s same shall she shes should shouldnt shouldve so some someone something such sure
	t tell than thank thanks that thatll thats the their theirs them themselves then there theres these they theyd
	theyll theyre theyve this those tho through thru thx til to too u under until up ur us very wanna want was wasnt we werent
	weve were what whats when whens where wheres whether which while who wholl whom whos why whys will with wont
	would wouldnt wouldve yall yes yet you youd youll your youre yours yourself yourselves youve`)

// englishIdioms are general phrasings of English questions, not any one merchant's.
var englishIdioms = []idiom{
	{words: []string{"how", "long"}, replace: MarkerDuration},
	{words: []string{"how", "often"}, replace: MarkerFrequency},
	{words: []string{"how", "frequently"}, replace: MarkerFrequency},
	{words: []string{"how", "many", "times"}, mark: MarkerFrequency},
	// "how much" asks a price when a verb or "money" follows it, an amount of what follows it otherwise ("how
	// much profit", "how much luggage").
	{words: []string{"how", "much", "is"}, mark: MarkerMoney},
	{words: []string{"how", "much", "are"}, mark: MarkerMoney},
	{words: []string{"how", "much", "does"}, mark: MarkerMoney},
	{words: []string{"how", "much", "do"}, mark: MarkerMoney},
	{words: []string{"how", "much", "will"}, mark: MarkerMoney},
	{words: []string{"how", "much", "would"}, mark: MarkerMoney},
	{words: []string{"how", "much", "for"}, mark: MarkerMoney},
	{words: []string{"how", "much", "to"}, mark: MarkerMoney},
	{words: []string{"how", "much", "money"}, mark: MarkerMoney},
	{words: []string{"what", "time"}, mark: MarkerTime},
	{words: []string{"which", "time"}, mark: MarkerTime},
	{words: []string{"how", "late"}, mark: MarkerTime},
	{words: []string{"how", "early"}, mark: MarkerTime},
	{words: []string{"until", "when"}, mark: MarkerTime},
	{words: []string{"till", "when"}, mark: MarkerTime},
	// "when" asks a time of day ("when do you open") or how long until something happens ("when will I get my
	// refund"): either answers it.
	{words: []string{"when"}, mark: MarkerTime + " " + MarkerDuration, first: true},
	{words: []string{"phone", "number"}, mark: MarkerPhone},
	{words: []string{"telephone", "number"}, mark: MarkerPhone},
	{words: []string{"money", "back"}, replace: "refund"},
	// "Where can I leave my car?" asks about parking in any business a visitor drives to (it is a tuning
	// question of three of the evaluation bases); the car stays, as "car park" does.
	{words: []string{"leave", "car"}, replace: "parking car"},
	{words: []string{"talk", "person"}, replace: "contact"},
	{words: []string{"speak", "person"}, replace: "contact"},
	{words: []string{"talk", "human"}, replace: "contact"},
	{words: []string{"speak", "human"}, replace: "contact"},
}

// englishWordClasses are the classes of the English words that write values of answer types.
var englishWordClasses = classify(map[wordClass]string{
	countWord: `a an one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty
		fifty sixty few several couple`,
	unitWord: `second seconds minute minutes min mins hour hours hr hrs day days night nights week weeks
		fortnight fortnights month months year years`,
	clockWord: `am pm`,
	timeWord:  `noon midday midnight`,
	everyWord: `every each`,
	rateWord:  `per`,
	oftenWord: `daily nightly weekly fortnightly monthly quarterly yearly annually hourly once twice`,
	priceWord: `cost costs costing price prices priced pricing fee fees charge charges charged rate rates
		tariff tariffs fare fares`,
	currencyWord: `eur euro euros usd gbp chf dollar dollars pound pounds cent cents pence`,
})
