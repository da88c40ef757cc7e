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
	// english is true for English, the only language with idioms, abbreviations, synonyms, irregular forms and
	// general word frequencies.
	english bool
}

// englishLanguage is the default language, and germanLanguage is used when the merchant's widget speaks German.
var (
	englishLanguage = &language{stem: stem, stopWords: stopWords, english: true}
	germanLanguage  = &language{stem: stemGerman, stopWords: germanStopWords}
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
// "ss" spellings of "ß" and umlauts written as "ae", "oe", "ue" are included.
var germanStopWords = toSet(`aber alle allem allen aller alles als also am an ander andere anderem anderen anderer
	anderes auch auf aus bei beim bin bis bitte bist da dabei damit dann das dass daß dem den denn der des dich
	dir doch dort du durch ein eine einem einen einer eines er es etwa etwas euch euer eure für fuer gibt gern
	gerne habe haben hab hallo hast hat hatte hätte haette ich ihm ihn ihnen ihr ihre im in ist ja jemand jetzt
	kann kannst können koennen könnte koennte man mehr mein meine meinem meinen meiner mich mir mit muss müssen
	muessen nach nicht noch nun nur ob oder ohne sehr sein seine sich sie sind so soll sollte über ueber um und
	uns unser unsere unter viel vom von vor war waren warum was weil welche welcher welches wenn wer werde werden
	wie wieso wieviel wieviele will wir wird wo woher wohin wollen würde wuerde zu zum zur`)

// informative reports whether a word says something about a question's topic: it is no stop word.
func (l *language) informative(word string) bool {
	_, stop := l.stopWords[word]
	return !stop
}
