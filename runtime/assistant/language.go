package assistant

import (
	"strings"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/german"
)

// language is how the words of one language are indexed and searched.
type language struct {
	// stem reduces a lower-case word to its stem.
	stem func(word string) string
	// stopWords are the language's words that say nothing about a question's topic.
	stopWords map[string]struct{}
	// rarity says, from 0 to 1, how informative a lower-case word is in the language in general, and whether
	// the language's frequency list has it (generalRarity).
	rarity func(word string) (rarity float64, listed bool)
	// compounds is true for a language that writes compounds as one word, whose parts are matched (see
	// splitCompound).
	compounds bool
	// clauseBreaks are the words that may join two questions in one message ("and", "also"; see splitClauses).
	clauseBreaks []string
	// thesaurus returns the language's groups of synonyms, matched to a question word the knowledge base lacks;
	// nil for English, which has word vectors instead.
	thesaurus func() *thesaurus
	// idioms are the language's common phrasings of questions, rewritten before a question is searched.
	idioms []idiom
	// wordClasses are the classes of the language's words that detecting answer types relies on (see
	// appendAnswerTypes).
	wordClasses map[string]wordClass
	// english is true for English, the only language with acronyms of names, the synonym list, irregular
	// forms, derived forms and word vectors.
	english bool
}

// englishLanguage is the default language, and germanLanguage is used when the merchant's widget speaks German.
var (
	englishLanguage = &language{stem: stem, stopWords: stopWords, rarity: generalRarity,
		clauseBreaks: []string{"and", "also", "plus"}, idioms: englishIdioms, wordClasses: englishWordClasses,
		english: true}
	germanLanguage = &language{stem: stemGerman, stopWords: germanStopWords, rarity: germanRarity,
		clauseBreaks: []string{"und", "außerdem", "ausserdem"}, compounds: true, thesaurus: germanThesaurus,
		idioms: germanIdioms, wordClasses: germanWordClasses}
)

// languageOf returns the language of a BCP 47 locale such as "de-AT": German for German, English otherwise.
func languageOf(locale string) *language {
	lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(locale)), "-")
	lang, _, _ = strings.Cut(lang, "_")
	if lang == "de" {
		return germanLanguage
	}
	return englishLanguage
}

// stemGerman reduces a German word to its Snowball stem ("Lieferung" and "liefern" to "liefer").
func stemGerman(word string) string {
	env := snowballstem.NewEnv(word)
	german.Stem(env)
	return env.Current()
}

// germanStopWords are common German words, question words and chat filler that say nothing about the topic;
// "ss" spellings of "ß" and umlauts written as "ae", "oe", "ue" are included. Like the English list, it holds
// the forms of the auxiliary and modal verbs and of the verbs any request is made with (get, find, know, need,
// want), in both the familiar (du, ihr) and the polite (Sie) forms visitors write in.
var germanStopWords = toSet(`aber alle allem allen aller alles als also am an ander andere anderem anderen anderer
	anderes auch auf aus bei beim bekomme bekommen bekommst bekommt bin bis bist bitte brauche brauchen brauchst
	braucht da dabei damit danke dann darf darfst das dass daß dein deine deinem deinen deiner dem den denn der des
	dich die dies diese diesem diesen dieser dieses dir doch dort du duerfen duerft durch dürfen dürft eigentlich ein
	eine einem einen einer eines einfach er es etwa etwas euch euer eure eurem euren eurer finde finden findet fuer für
	gern gerne gibt gut hab habe haben habt haette haetten hallo hast hat hatte hätte hätten hey hi ich ihm ihn ihnen
	ihr ihre ihrem ihren ihrer im in irgendwie ist ja jemand jetzt kann kannst kein keine keinem keinen keiner koennen
	koennt koennte koennten komme kommen kommst kommt können könnt könnte könnten kriege kriegen mag mal man mehr mein
	meine meinem meinen meiner mich mir mit möchte möchten möchtest moechte moechten moechtest muessen muesst muesste
	muss müssen musst müsst müsste nach nein nicht noch nun nur ob oder ohne okay schon sehr sei seid sein seine sich
	sie sind so soll sollen sollst sollt sollte sollten über ueber um und uns unser unsere unserem unseren unserer
	unter viel vom von vor waere waeren wann war wäre waren wären warum was weil weiss weiß weisst weißt welche welchem
	welchen welcher welches wenn wer werde werden werdet wie wieso wieviel wieviele will willst wir wird wirst wissen
	wo wofuer wofür woher wohin wollen wollt wollte wuerde wuerden wuerdest würde würden würdest zu zum zur`)

// informative reports whether a word says something about a question's topic: it is no stop word.
func (l *language) informative(word string) bool {
	_, stop := l.stopWords[word]
	return !stop
}
