package chat

import (
	"strings"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// personLanguage is how visitors of one language ask for a person, and what they are told then. A message asks
// for a person when a word for one (nouns) stands next to a verb of reaching them (verbs), before or after it,
// with only fillers between ("can I talk to a real person", "kann ich mit einem Mitarbeiter sprechen"), or when the
// message is short and holds nothing but such a word and fillers ("human please", "Mitarbeiter bitte"). A noun
// alone in a longer message ("does the agent ship to Canada?") asks for nothing. A language is one entry of
// personLanguages.
type personLanguage struct {
	tag                   string
	nouns, verbs, fillers map[string]struct{}
	// waiting is the notice when someone of the team is there; nobody when nobody is.
	waiting, nobody string
}

// maxShortRequest is the most words a request made of a noun and fillers alone has.
const maxShortRequest = 4

// maxFillers is the most fillers between a verb and its noun.
const maxFillers = 4

func words(s string) map[string]struct{} {
	set := map[string]struct{}{}
	for _, w := range strings.Fields(s) {
		set[w] = struct{}{}
	}
	return set
}

// personLanguages are the languages the widget and the offline assistant speak, English first (the default).
var personLanguages = []personLanguage{
	{
		tag: "en",
		nouns: words(`human humans person people agent agents someone somebody anyone anybody representative rep
			operator staff employee manager`),
		verbs: words(`talk speak chat connect transfer reach contact get want escalate`),
		fillers: words(`to with a an the some real live actual your me please one of i can could may would like
			human now just pls plz`),
		waiting: "I've asked a person from the team to join. They will answer here, in this chat.",
		nobody: "Nobody from the team is available right now. Your message waits for them and they will answer here; " +
			"you can also leave your email in the contact form so they can get back to you.",
	},
	{
		tag: "de",
		nouns: words(`mensch menschen person personen mitarbeiter mitarbeiterin mitarbeitern jemand jemandem
			berater beraterin kundendienst kundenservice ansprechpartner support`),
		verbs: words(`sprechen reden chatten verbinden erreichen schreiben kontaktieren`),
		fillers: words(`mit einem einer echten echter echtem menschlichen ihrem ihrer eurem einen den dem zu bitte
			sie mich ich kann könnte möchte will würde gern gerne jetzt mal doch`),
		waiting: "Ich habe eine Person aus dem Team dazugeholt. Sie antwortet hier im Chat.",
		nobody: "Gerade ist niemand aus dem Team erreichbar. Ihre Nachricht wartet auf das Team und wird hier beantwortet; " +
			"Sie können auch Ihre E-Mail-Adresse im Kontaktformular hinterlassen, damit man sich bei Ihnen meldet.",
	},
}

// asksForPerson reports whether message asks for a person of the merchant's team, and in which language.
func asksForPerson(message string) (personLanguage, bool) {
	tokens := lang.Tokenize(message)
	for _, l := range personLanguages {
		if l.asks(tokens) {
			return l, true
		}
	}
	return personLanguage{}, false
}

func (l personLanguage) asks(tokens []string) bool {
	short := len(tokens) <= maxShortRequest
	for i, t := range tokens {
		if _, ok := l.nouns[t]; !ok {
			continue
		}
		if l.verbNear(tokens, i, -1) || l.verbNear(tokens, i, +1) {
			return true
		}
		if short && l.onlyFillers(tokens, i) {
			return true
		}
	}
	return false
}

// verbNear reports whether a verb stands before (step -1) or after (step +1) the noun at i, with only fillers
// between.
func (l personLanguage) verbNear(tokens []string, i, step int) bool {
	for j, n := i+step, 0; j >= 0 && j < len(tokens) && n <= maxFillers; j, n = j+step, n+1 {
		if _, ok := l.verbs[tokens[j]]; ok {
			return true
		}
		if _, ok := l.fillers[tokens[j]]; !ok {
			return false
		}
	}
	return false
}

// onlyFillers reports whether every word but the noun at i is a filler.
func (l personLanguage) onlyFillers(tokens []string, i int) bool {
	for j, t := range tokens {
		if _, ok := l.fillers[t]; !ok && j != i {
			return false
		}
	}
	return true
}

// personLanguageFor is the language a notice is written in for a visitor of a merchant whose widget speaks
// locale ("de", "de-AT"), English when none of personLanguages is.
func personLanguageFor(locale string) personLanguage {
	tag, _, _ := strings.Cut(strings.ToLower(locale), "-")
	for _, l := range personLanguages {
		if l.tag == tag {
			return l
		}
	}
	return personLanguages[0]
}
