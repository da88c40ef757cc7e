package lang

import (
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/german"
)

// German is the language of merchants whose widget speaks German. Its frequency list gives ranks, not counts; it
// writes compounds as one word, and its stemmer parts some forms of one word (OtherForm).
var German = &Language{
	stem:         stemGerman,
	stopWords:    germanStopWords,
	rarity:       germanRarity,
	clauseBreaks: []string{"und", "außerdem", "ausserdem"},
	askingWords: toSet(`kann kannst können könnt koennen koennt könnte könnten koennte koennten gibt gibts ist
		sind bin bist muss musst müssen muessen darf darfst dürfen duerfen habe hast hat habt haben bietet bieten
		bietest wird werden soll sollte sollen brauche brauchst braucht wie was wo wann warum welche welcher
		welches welchen welchem wer wen wem wieso weshalb woher wohin womit wofür wofuer wieviel wieviele`),
	leadIns:     toSet(`also aber und dann ok okay na`),
	idioms:      germanIdioms,
	wordClasses: germanWordClasses,
	// The linking elements of German compounds, longest first ("Prüfung-s-ergebnis", "Hund-e-leine",
	// "Straße-n-bahn"), and the "zu" inside a separable verb's infinitive ("vor-zu-bereiten").
	compounds: &compounding{linking: []string{"es", "en", "er", "s", "n", "e"}, infix: "zu"},
	otherForm: otherGermanForm,
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

// otherGermanForm returns the other form of a German word, with or without a final "e". Snowball strips a final
// "s" after some letters but not the "s" of a final "se", so it stems the singular "Kurs" as "kur" and the plural
// "Kurse" as "kurs"; trying the other form relates them. Words shorter than a compound's head have none.
func otherGermanForm(w string) (string, bool) {
	if utf8.RuneCountInString(w) < MinCompoundHead {
		return "", false
	}
	if base, ok := strings.CutSuffix(w, "e"); ok {
		return base, true
	}
	return w + "e", true
}

// germanIdioms are general phrasings of German questions: the answer types they ask for.
var germanIdioms = []idiom{
	{words: []string{"um", "wie", "viel", "uhr"}, mark: MarkerTime},
	{words: []string{"wann"}, mark: MarkerTime + " " + MarkerDuration},
	{words: []string{"wie", "spät"}, mark: MarkerTime},
	{words: []string{"uhrzeit"}, mark: MarkerTime},
	{words: []string{"wie", "lange"}, mark: MarkerDuration},
	{words: []string{"wie", "lang"}, mark: MarkerDuration},
	{words: []string{"wie", "oft"}, mark: MarkerFrequency},
	{words: []string{"wie", "häufig"}, mark: MarkerFrequency},
	{words: []string{"wie", "viel", "kostet"}, mark: MarkerMoney},
	{words: []string{"wie", "viel", "kosten"}, mark: MarkerMoney},
	{words: []string{"was", "kostet"}, mark: MarkerMoney},
	{words: []string{"was", "kosten"}, mark: MarkerMoney},
	{words: []string{"wie", "teuer"}, mark: MarkerMoney},
	{words: []string{"telefonnummer"}, mark: MarkerPhone},
	{words: []string{"rufnummer"}, mark: MarkerPhone},
}

// germanWordClasses are the classes of the German words that write values of answer types.
var germanWordClasses = classify(map[wordClass]string{
	countWord: `ein eine einen einem einer zwei drei vier fünf fuenf sechs sieben acht neun zehn elf zwölf
		zwoelf zwanzig dreißig dreissig paar wenige mehrere`,
	unitWord: `sekunde sekunden minute minuten min stunde stunden std tag tage tagen nacht nächte naechte
		nächten naechten woche wochen monat monate monaten jahr jahre jahren semester`,
	clockWord: `uhr`,
	timeWord:  `mittag mittags mitternacht`,
	everyWord: `jede jeden jedes jedem`,
	rateWord:  `pro`,
	oftenWord: `täglich taeglich wöchentlich woechentlich monatlich jährlich jaehrlich stündlich stuendlich
		einmal zweimal`,
	priceWord: `kostet kosten preis preise gebühr gebühren gebuehr gebuehren beitrag beiträge beitraege
		tarif tarife zahlen zahlt beträgt betraegt`,
	currencyWord: `eur euro euros cent chf`,
})
