package assistant

import "strings"

// localeTexts are the built-in texts of one language.
type localeTexts struct {
	greeting string
	thanks   string
	fallback string
	// otherPart introduces the answer to another part of the question, with the title of the item it quotes.
	otherPart string
}

// builtinTexts holds the built-in texts by lower-case ISO 639 language code.
var builtinTexts = map[string]localeTexts{
	"en": {
		greeting:  "Hello! How can I help you today? Ask me a question and I'll look it up for you.",
		thanks:    "You're welcome! If you have another question, just ask.",
		fallback:  "I'm sorry, I don't know the answer to that yet. Leave your email or phone number and the team will get back to you.",
		otherPart: "As for the other part of your question (%s):",
	},
	"de": {
		greeting:  "Hallo! Wie kann ich Ihnen helfen? Stellen Sie mir einfach Ihre Frage.",
		thanks:    "Gern geschehen! Wenn Sie noch eine Frage haben, fragen Sie einfach.",
		fallback:  "Das weiß ich leider noch nicht. Hinterlassen Sie Ihre E-Mail-Adresse oder Telefonnummer, dann meldet sich das Team bei Ihnen.",
		otherPart: "Zum anderen Teil Ihrer Frage (%s):",
	},
	"fr": {
		greeting:  "Bonjour ! Comment puis-je vous aider ? Posez-moi votre question.",
		thanks:    "Avec plaisir ! Si vous avez une autre question, n'hésitez pas.",
		fallback:  "Désolé, je ne connais pas encore la réponse. Laissez votre e-mail ou votre numéro de téléphone et l'équipe vous recontactera.",
		otherPart: "Pour l'autre partie de votre question (%s) :",
	},
	"es": {
		greeting:  "¡Hola! ¿En qué puedo ayudarte? Hazme tu pregunta.",
		thanks:    "¡De nada! Si tienes otra pregunta, aquí estoy.",
		fallback:  "Lo siento, todavía no sé la respuesta. Déjanos tu correo electrónico o tu número de teléfono y el equipo se pondrá en contacto contigo.",
		otherPart: "En cuanto a la otra parte de tu pregunta (%s):",
	},
	"it": {
		greeting:  "Ciao! Come posso aiutarti oggi? Fammi una domanda e cercherò la risposta per te.",
		thanks:    "Prego! Se hai un'altra domanda, chiedi pure.",
		fallback:  "Mi dispiace, non conosco ancora la risposta. Lascia la tua email o il tuo numero di telefono e il team ti ricontatterà.",
		otherPart: "Quanto all'altra parte della tua domanda (%s):",
	},
	"nl": {
		greeting:  "Hallo! Waarmee kan ik je helpen? Stel je vraag en ik zoek het voor je op.",
		thanks:    "Graag gedaan! Heb je nog een vraag, stel die gerust.",
		fallback:  "Sorry, het antwoord daarop weet ik nog niet. Laat je e-mailadres of telefoonnummer achter, dan neemt het team contact met je op.",
		otherPart: "Over het andere deel van je vraag (%s):",
	},
	"pt": {
		greeting:  "Olá! Como posso ajudar hoje? Faça sua pergunta e eu procuro a resposta para você.",
		thanks:    "Por nada! Se tiver outra pergunta, é só perguntar.",
		fallback:  "Desculpe, ainda não sei a resposta. Deixe seu e-mail ou número de telefone e a equipe entrará em contato.",
		otherPart: "Quanto à outra parte da sua pergunta (%s):",
	},
	"pl": {
		greeting:  "Dzień dobry! W czym mogę pomóc? Zadaj pytanie, a poszukam odpowiedzi.",
		thanks:    "Nie ma za co! Jeśli masz jeszcze jakieś pytanie, śmiało pytaj.",
		fallback:  "Niestety nie znam jeszcze odpowiedzi. Zostaw adres e-mail lub numer telefonu, a zespół się z Tobą skontaktuje.", //nolint:misspell // Polish for "address"
		otherPart: "Co do drugiej części pytania (%s):",
	},
}

// textsForRequest returns the built-in texts in the visitor's language when they exist in it, or else in the
// merchant's.
func textsForRequest(req Request) localeTexts {
	if t, ok := builtinTexts[language(req.Language)]; ok {
		return t
	}
	return textsFor(req.Locale)
}

// language is the lower-case ISO 639 code of a BCP 47 locale such as "de-AT" or "pt_BR".
func language(locale string) string {
	lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(locale)), "-")
	lang, _, _ = strings.Cut(lang, "_")
	return lang
}

// textsFor returns the built-in texts for a BCP 47 locale such as "de-AT", falling back to English.
func textsFor(locale string) localeTexts {
	if t, ok := builtinTexts[language(locale)]; ok {
		return t
	}
	return builtinTexts["en"]
}
