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
	{
		tag: "fr",
		nouns: words(`humain humaine humains personne personnes conseiller conseillère conseillers agent agents
			opérateur opératrice quelquun employé employée vendeur vendeuse`),
		verbs: words(`parler discuter contacter joindre échanger appeler`),
		fillers: words(`à a avec un une des le la les au vrai vraie réel réelle vivant sil vous plaît plait svp je
			j puis peux pourrais voudrais veux aimerais bien me moi maintenant`),
		waiting: "J'ai demandé à une personne de l'équipe de nous rejoindre. Elle vous répondra ici, dans ce chat.",
		nobody: "Personne de l'équipe n'est disponible pour le moment. Votre message l'attend et elle vous répondra ici ; " +
			"vous pouvez aussi laisser votre e-mail dans le formulaire de contact pour être recontacté.",
	},
	{
		tag: "es",
		nouns: words(`humano humana humanos persona personas agente agentes asesor asesora operador operadora
			alguien empleado empleada representante`),
		verbs: words(`hablar hable conversar chatear contactar comunicarme comunicar pasar`),
		fillers: words(`con un una el la los las a al de real verdadero verdadera por favor porfa quiero quisiera
			puedo podría podria me gustaría gustaria ahora mismo`),
		waiting: "He pedido que se una una persona del equipo. Te responderá aquí, en este chat.",
		nobody: "Ahora mismo no hay nadie del equipo disponible. Tu mensaje les espera y te responderán aquí; " +
			"también puedes dejar tu correo electrónico en el formulario de contacto para que te contesten.",
	},
	{
		tag:   "it",
		nouns: words(`umano umani persona persone operatore operatrice agente consulente qualcuno addetto addetta`),
		verbs: words(`parlare chattare contattare sentire passare`),
		fillers: words(`con un una uno il lo la a al allo alla vero vera reale per favore posso potrei vorrei voglio
			mi ora adesso`),
		waiting: "Ho chiesto a una persona del team di unirsi. Ti risponderà qui, in questa chat.",
		nobody: "Al momento nessuno del team è disponibile. Il tuo messaggio li aspetta e ti risponderanno qui; " +
			"puoi anche lasciare la tua e-mail nel modulo di contatto per essere ricontattato.",
	},
	{
		tag:   "nl",
		nouns: words(`mens persoon medewerker medewerkster medewerkers iemand agent klantenservice`),
		verbs: words(`praten spreken chatten bellen verbinden doorverbinden`),
		fillers: words(`met een echte echt de het graag alstublieft alsjeblieft aub ik kan mag wil wel zou willen nu
			even mij me`),
		waiting: "Ik heb iemand van het team gevraagd om mee te doen. Diegene antwoordt hier, in deze chat.",
		nobody: "Er is op dit moment niemand van het team beschikbaar. Je bericht wacht op hen en ze antwoorden hier; " +
			"je kunt ook je e-mailadres achterlaten in het contactformulier, zodat ze contact met je opnemen.",
	},
	{
		tag: "pt",
		nouns: words(`humano humana humanos pessoa pessoas atendente agente operador operadora funcionário
			funcionária alguém consultor consultora`),
		verbs: words(`falar conversar contactar contatar ligar`),
		fillers: words(`com um uma o a os as de real verdadeiro verdadeira por favor quero queria posso poderia
			gostaria agora me`),
		waiting: "Pedi a uma pessoa da equipa para se juntar. Vai responder aqui, neste chat.",
		nobody: "De momento ninguém da equipa está disponível. A sua mensagem fica à espera e vão responder aqui; " +
			"também pode deixar o seu e-mail no formulário de contacto para que o contactem.",
	},
	{
		tag: "pl",
		nouns: words(`człowiek człowiekiem osoba osobą konsultant konsultantem konsultantka konsultantką pracownik
			pracownikiem ktoś kimś agent agentem`),
		verbs: words(`rozmawiać porozmawiać połączyć połącz mówić pogadać skontaktować`),
		fillers: words(`z ze prawdziwym prawdziwą żywym chcę chciałbym chciałabym mogę czy można proszę teraz mnie
			się`),
		waiting: "Poprosiłem osobę z zespołu o dołączenie. Odpowie tutaj, w tym czacie.",
		nobody: "Nikt z zespołu nie jest teraz dostępny. Twoja wiadomość czeka na zespół, który odpowie tutaj; " +
			"możesz też zostawić swój e-mail w formularzu kontaktowym, aby ktoś się z Tobą skontaktował.",
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
