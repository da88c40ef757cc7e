package assistant

import (
	"slices"
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
	// askingWords are the words a clause that asks begins with: question words and the verbs a question is
	// turned with ("can", "is", "do"; see storyWords); leadIns the words that may come before them ("so can I").
	askingWords, leadIns map[string]struct{}
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
		askingWords: toSet(`can could will would shall should may might must is are am was were do does did have has
			had how what where when why which who whom whose any anyone anything wheres whats hows whens whos`),
		leadIns: toSet(`so but and then just also ok okay well`), english: true}
	germanLanguage = &language{stem: stemGerman, stopWords: germanStopWords, rarity: germanRarity,
		clauseBreaks: []string{"und", "außerdem", "ausserdem"}, compounds: true, thesaurus: germanThesaurus,
		idioms: germanIdioms, wordClasses: germanWordClasses,
		askingWords: toSet(`kann kannst können könnt koennen koennt könnte könnten koennte koennten gibt gibts ist
			sind bin bist muss musst müssen muessen darf darfst dürfen duerfen habe hast hat habt haben bietet bieten
			bietest wird werden soll sollte sollen brauche brauchst braucht wie was wo wann warum welche welcher
			welches welchen welchem wer wen wem wieso weshalb woher wohin womit wofür wofuer wieviel wieviele`),
		leadIns: toSet(`also aber und dann ok okay na`)}
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

// storyWords returns the words of message that it uses only in clauses that tell rather than ask, when it has
// both: "my chain snapped on the way to work" of "my chain snapped on the way to work, can I just drop in and
// get a new one put on now?". A clause asks when it begins with one of the language's asking words, after a
// lead-in or not; clauses end at punctuation. A message of one clause, or of no clause that asks, has none.
func (l *language) storyWords(message string) []string {
	var asking, telling []string
	for clause := range strings.FieldsFuncSeq(message, func(r rune) bool { return strings.ContainsRune(",;:.?!\n", r) }) {
		words := tokenize(clause)
		if len(words) == 0 {
			continue
		}
		if l.asks(words) {
			asking = append(asking, words...)
		} else {
			telling = append(telling, words...)
		}
	}
	if len(asking) == 0 {
		return nil
	}
	return slices.DeleteFunc(telling, func(w string) bool { return slices.Contains(asking, w) })
}

// asks reports whether a clause of these words asks: its first word, or the first after a lead-in, is an asking
// word.
func (l *language) asks(words []string) bool {
	first := words[0]
	if _, lead := l.leadIns[first]; lead && len(words) > 1 {
		first = words[1]
	}
	_, ok := l.askingWords[first]
	return ok
}
