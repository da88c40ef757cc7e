package lang

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize splits text into lower-case words made of Unicode letters and digits. Apostrophes inside a word are
// dropped ("isn't" becomes "isnt", "O'Neil" "oneil"), except that a clitic after one is ("we'd" is "we", not the
// "wed" of "wedding"; "shop's" is "shop"); a currency sign becomes its name ("$75" is "dollar", "75"); every other
// character separates words. A word written in lower case in text is a part of text, not a copy.
func Tokenize(text string) []string {
	// Room for words of four bytes and a separator on average, so that a question's words take one allocation
	// instead of one per doubling.
	return AppendTokens(make([]string, 0, len(text)/5+1), text)
}

// AppendTokens appends the words of text, as Tokenize splits it, to words.
func AppendTokens(words []string, text string) []string {
	start := -1 // where the current word starts, or -1 between words
	// copied is set when the current word differs from text[start:], and b holds it then.
	copied := false
	var b []byte
	flush := func(end int) {
		switch {
		case start < 0:
			return
		case copied:
			words = append(words, string(b))
		default:
			words = append(words, text[start:end])
		}
		start, copied = -1, false
	}
	// copyWord starts b with the current word up to i.
	copyWord := func(i int) {
		if !copied {
			b = append(b[:0], text[start:i]...)
			copied = true
		}
	}
	skip := 0 // text before skip is a clitic to leave out
	for i, r := range text {
		switch {
		case i < skip:
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
			lower := unicode.ToLower(r)
			if lower != r {
				copyWord(i)
			}
			if copied {
				b = utf8.AppendRune(b, lower)
			}
		case isApostrophe(r) && start >= 0 && nextIsLetter(text[i+utf8.RuneLen(r):]):
			after := i + utf8.RuneLen(r)
			if n := cliticLen(text[after:]); n > 0 {
				flush(i)
				skip = after + n
				continue
			}
			// Part of a contraction or a name: skip it and keep the word together.
			copyWord(i)
		default:
			flush(i)
			if name, ok := currencyNames[r]; ok {
				words = append(words, name)
			}
		}
	}
	flush(len(text))
	return words
}

// maxCompoundParts is the most words a compound joins: longer runs of hyphenated words are phrases
// ("out-of-hours-only-please"), not spellings of one word.
const maxCompoundParts = 3

// AppendCompounds appends to out the compounds of text, lower case: two or three words of letters joined by
// hyphens or slashes, written as one word ("X-rays" is "xrays", "wi-fi" "wifi"). Writers spell such words joined,
// hyphenated or apart ("check-out", "checkout"), so the index also keeps the joined form. A run with a digit
// ("24-hour") is no compound.
func AppendCompounds(out []string, text string) []string {
	if !hasJoiner(text) {
		return out // the common case, without scanning
	}
	var b []byte
	parts := 0           // words in the current run
	inWord := false      // the last rune was a letter or digit
	afterJoiner := false // the last rune was a joiner that followed a word
	digit := false       // the current run has a digit
	flush := func() {
		if parts >= 2 && parts <= maxCompoundParts && !digit {
			out = append(out, string(b))
		}
		b, parts, digit = b[:0], 0, false
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				if !afterJoiner {
					flush()
				}
				parts++
				inWord, afterJoiner = true, false
			}
			digit = digit || unicode.IsDigit(r)
			b = utf8.AppendRune(b, unicode.ToLower(r))
		case isJoiner(r) && inWord:
			inWord, afterJoiner = false, true
		default:
			flush()
			inWord, afterJoiner = false, false
		}
	}
	flush()
	return out
}

// hasJoiner reports whether text has a rune isJoiner reports. Searching for each byte sequence is several times
// faster than strings.ContainsAny with runes beyond ASCII, which decodes text rune by rune.
func hasJoiner(text string) bool {
	return strings.IndexByte(text, '-') >= 0 || strings.IndexByte(text, '/') >= 0 ||
		strings.Contains(text, "\u2010") || strings.Contains(text, "\u2011")
}

// isJoiner reports whether r joins the words of a compound: a hyphen or a slash.
func isJoiner(r rune) bool {
	return r == '-' || r == '/' || r == '\u2010' || r == '\u2011'
}

// clitics are the endings English attaches to a word with an apostrophe that are words of their own ("we'd",
// "they're", "I'm") or a possessive ("shop's").
var clitics = []string{"s", "d", "ll", "re", "ve", "m"}

// cliticLen returns the length of the clitic s starts with, if its first word is one, and 0 otherwise.
func cliticLen(s string) int {
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(s)
	}
	for _, c := range clitics {
		if strings.EqualFold(s[:end], c) {
			return end
		}
	}
	return 0
}

// nextIsLetter reports whether s starts with a letter.
func nextIsLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == 'ʼ'
}

// IsNumber reports whether a word is made of digits only.
func IsNumber(word string) bool {
	for _, r := range word {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return word != ""
}

// SplitSentences splits text into sentences at '.', '!' or '?' followed by white space, and at line breaks. A
// full stop followed by a lower-case word ("e.g. a tent", "approx. two") does not end a sentence, nor one inside a
// number ("0.1"). The sentences are parts of text, trimmed of white space.
func SplitSentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i, r := range text {
		switch r {
		case '\n':
			flush(i + 1)
		case '.', '!', '?':
			rest := text[i+1:]
			if next, _ := utf8.DecodeRuneInString(rest); rest != "" && !unicode.IsSpace(next) {
				continue
			}
			if next := nextNonSpace(rest); next != 0 && unicode.IsLower(next) {
				continue
			}
			flush(i + 1)
		}
	}
	flush(len(text))
	return out
}

// nextNonSpace returns the first rune of s that is not white space, or 0.
func nextNonSpace(s string) rune {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return r
		}
	}
	return 0
}

// currencyNames are the words for currency signs.
var currencyNames = map[rune]string{'$': "dollar", '€': "euro", '£': "pound"}

// toSet turns a space-separated list of words into a set.
func toSet(words string) map[string]struct{} {
	set := make(map[string]struct{})
	for _, w := range strings.Fields(words) {
		set[w] = struct{}{}
	}
	return set
}
