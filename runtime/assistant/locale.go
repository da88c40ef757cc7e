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
}

// textsFor returns the built-in texts for a BCP 47 locale such as "de-AT", falling back to English.
func textsFor(locale string) localeTexts {
	lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(locale)), "-")
	lang, _, _ = strings.Cut(lang, "_")
	if t, ok := builtinTexts[lang]; ok {
		return t
	}
	return builtinTexts["en"]
}
