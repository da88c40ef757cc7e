package lang

import "strings"

// Answer types. A question asked with "when", "how long", "how often", "how much is" or "phone number" wants a
// time, a duration, a frequency, a price or a telephone number, whatever its other words: "what time do you close
// on fridays" is answered by the sentence giving the hours, "how long does the whole implant process take" by the
// one saying "three to six months", although neither shares a word with the question's subject. This is how question-answering systems
// have long narrowed their candidates (answer-type classification), and it needs only general knowledge of the
// language, nothing of any business.
//
// Each type is indexed as a marker term, a word no text can spell (MarkerPrefix), in every sentence that holds a
// value of the type (AppendAnswerTypes); the question's phrase puts the marker in, optional like an idiom's word
// (see englishIdioms and germanIdioms), so that it counts for an item that has such a value but not against one
// that lacks it. It only reorders the items the question's words found (the engine's Index.addAnswerType): by
// itself, a type is about nothing.
const (
	MarkerPrefix    = "#"
	MarkerTime      = MarkerPrefix + "time"
	MarkerDuration  = MarkerPrefix + "duration"
	MarkerFrequency = MarkerPrefix + "frequency"
	MarkerMoney     = MarkerPrefix + "money"
	MarkerPhone     = MarkerPrefix + "phone"
)

// IsMarker reports whether w is an answer type's marker term; tokenizing never makes one.
func IsMarker(w string) bool { return strings.HasPrefix(w, MarkerPrefix) }

// wordClass is a set of the roles a word plays in writing a value of an answer type.
type wordClass uint16

const (
	// countWord counts a unit ("three months", "a week", "ein paar Tage").
	countWord wordClass = 1 << iota
	// unitWord is a unit of time, singular or plural.
	unitWord
	// clockWord makes a number before it a time of day ("9 am", "18 Uhr").
	clockWord
	// timeWord is a time of day by itself ("noon").
	timeWord
	// everyWord makes a unit after it a frequency ("every six months", "jede Woche").
	everyWord
	// rateWord makes a number before it a rate ("18 per night"), as the indefinite article does in English
	// ("25 a day").
	rateWord
	// oftenWord is a frequency by itself ("daily", "twice", "monatlich").
	oftenWord
	// priceWord makes a number in the same sentence, or in any sentence of an item whose title has one, an
	// amount of money ("costs 9 a month", "Prices: examination 55").
	priceWord
	// currencyWord is a written name or code of a currency, which makes a number before it money.
	currencyWord
)

// classify returns the classes of a language's words, from lists of words for each class.
func classify(lists map[wordClass]string) map[string]wordClass {
	classes := make(map[string]wordClass)
	for class, words := range lists {
		for _, w := range strings.Fields(words) {
			classes[w] |= class
		}
	}
	return classes
}

// AppendAnswerTypes appends to types the markers of the answer types of which sentence holds a value, given its
// tokens (AppendTokens). priced is set when the item's title names prices, which makes any number in it money.
func (l *Language) AppendAnswerTypes(types []string, tokens []string, sentence string, priced bool) []string {
	if l.noAnswerTypes {
		return types
	}
	classes := l.wordClasses
	var time, duration, frequency, money, number bool
	money = currencySign(sentence)
	quiet := 0 // tokens before quiet are part of a rate or a frequency, not a duration
	next := classOf(classes, tokens, 0)
	for i, w := range tokens {
		// Each token's classes are looked up once: as the next token's, then as the current one's.
		class := next
		next = classOf(classes, tokens, i+1)
		digits := IsNumber(w)
		number = number || digits
		switch {
		case class&timeWord != 0 || ClockToken(w):
			time = true
		case digits:
			time = time || next&clockWord != 0
			money = money || next&currencyWord != 0
		case class&priceWord != 0:
			priced = true
		case class&everyWord != 0:
			if unitWithin(classes, tokens[i+1:], everyWindow) { // "every six to twelve months"
				frequency = true
				quiet = i + 1 + everyWindow
			}
		case class&oftenWord != 0:
			frequency = true
		}
		counts := digits || class&countWord != 0
		if (counts || class&oftenWord != 0) && (next&rateWord != 0 || isArticle(tokens, i+1)) {
			quiet = i + 3 // "25 a day", "twice a week", "18 per night"
			// A number at a rate of time is a price: "18 per 24 hours", "9 a month".
			money = money || digits && unitWithin(classes, tokens[min(i+2, len(tokens)):], 2)
		}
		if counts && class&unitWord == 0 && i >= quiet && unitWithin(classes, tokens[i+1:], 2) {
			duration = true
		}
	}
	if !time {
		time = clockTime(sentence)
	}
	if time {
		types = append(types, MarkerTime)
	}
	if duration {
		types = append(types, MarkerDuration)
	}
	if frequency {
		types = append(types, MarkerFrequency)
	}
	if money || (priced && number) {
		types = append(types, MarkerMoney)
	}
	if phoneNumber(sentence) {
		types = append(types, MarkerPhone)
	}
	return types
}

// classOf returns the classes of tokens[i], none past the end.
func classOf(classes map[string]wordClass, tokens []string, i int) wordClass {
	if i >= len(tokens) {
		return 0
	}
	return classes[tokens[i]]
}

// isArticle reports whether tokens[i] is the English indefinite article, which after a number makes a rate.
func isArticle(tokens []string, i int) bool {
	return i < len(tokens) && (tokens[i] == "a" || tokens[i] == "an")
}

// NamesPrices reports whether a title's tokens name prices ("Prices", "Kursgebühren" does not: compounds are
// not taken apart here).
func (l *Language) NamesPrices(tokens []string) bool {
	classes := l.wordClasses
	for _, w := range tokens {
		if classes[w]&priceWord != 0 {
			return true
		}
	}
	return false
}

// everyWindow is how many tokens after "every" may hold its unit of time.
const everyWindow = 4

// unitWithin reports whether a unit of time is among the first n tokens ("six months", "5 working days").
func unitWithin(classes map[string]wordClass, tokens []string, n int) bool {
	for _, w := range tokens[:min(n, len(tokens))] {
		if classes[w]&unitWord != 0 {
			return true
		}
	}
	return false
}

// ClockToken reports whether a token is a time of day written as one word: "9am", "11pm"; "10.30pm" tokenizes
// as "10" and "30pm".
func ClockToken(w string) bool {
	if len(w) < 3 || len(w) > 4 || w[len(w)-1] != 'm' || w[len(w)-2] != 'a' && w[len(w)-2] != 'p' {
		return false
	}
	return IsNumber(w[:len(w)-2])
}

// currencySign reports whether text has a currency sign: "$", "£", "€" or "¥", found by their UTF-8 bytes
// in one pass.
func currencySign(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '$':
			return true
		case 0xC2: // "£" and "¥"
			if i+1 < len(text) && (text[i+1] == 0xA3 || text[i+1] == 0xA5) {
				return true
			}
		case 0xE2: // "€"
			if strings.HasPrefix(text[i:], "€") {
				return true
			}
		}
	}
	return false
}

// clockTime reports whether text writes a time of day with a colon ("9:00", "17:30") or with a full stop and
// the clock's word after it ("17.30 Uhr", "9.30 am"), which tells it from an amount ("12.50").
func clockTime(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != ':' && c != '.' {
			continue
		}
		before, after := digitsBefore(text, i), digitsAfter(text, i+1)
		if before < 1 || before > 2 || after != 2 || !leadingHour(text[i-before:i]) || text[i+1] > '5' {
			continue
		}
		if c == ':' || clockWordAt(text[i+3:]) {
			return true
		}
	}
	return false
}

// clockWordAt reports whether s starts, after spaces, with a word of the clock: "am", "pm", "a.m." or "Uhr".
func clockWordAt(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, " "))
	for _, w := range []string{"am", "pm", "a.m", "p.m", "uhr"} {
		if strings.HasPrefix(s, w) && (len(s) == len(w) || !isLetterByte(s[len(w)])) {
			return true
		}
	}
	return false
}

// isLetterByte reports whether b is an ASCII letter.
func isLetterByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// leadingHour reports whether s, one or two digits, is an hour of the clock.
func leadingHour(s string) bool {
	return len(s) == 1 || s[0] < '2' || (s[0] == '2' && s[1] <= '4')
}

// phoneNumber reports whether text holds a telephone number: a run of at least minPhoneDigits digits with
// spaces, hyphens, slashes, brackets or a leading "+" between them, as numbers are written ("020 7946 0958",
// "+49 341 123456", "1-800-555-0199"), not a date ("2026-11-24") nor an amount ("2,400").
func phoneNumber(text string) bool {
	n := 0 // digits of the current run
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c >= '0' && c <= '9':
			if n++; n >= minPhoneDigits {
				return true
			}
		case c == ' ' || c == '-' || c == '/' || c == '(' || c == ')' || c == '+':
			if n > 0 && i+1 < len(text) && text[i+1] == ' ' && c == ' ' {
				n = 0 // two spaces part two numbers
			}
		default:
			n = 0
		}
	}
	return false
}

// minPhoneDigits is the fewest digits a telephone number has: a prefix and a subscriber number.
const minPhoneDigits = 9

// digitAt reports whether s has a digit at position i.
func digitAt(s string, i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }

// digitsBefore counts the digits that end at s[i-1].
func digitsBefore(s string, i int) int {
	n := 0
	for digitAt(s, i-1-n) {
		n++
	}
	return n
}

// digitsAfter counts the digits that start at s[i].
func digitsAfter(s string, i int) int {
	n := 0
	for digitAt(s, i+n) {
		n++
	}
	return n
}
