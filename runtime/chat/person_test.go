package chat

import "testing"

func TestAsksForPerson(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    string // the language, "" for no request
	}{
		{"Can I talk to a human?", "en"},
		{"human please", "en"},
		{"Agent", "en"},
		{"I want to speak with a real person", "en"},
		{"could you connect me to someone from your staff", "en"},
		{"Can I speak to someone about a refund?", "en"},
		{"Mitarbeiter bitte", "de"},
		{"Kann ich mit einem Mitarbeiter sprechen?", "de"},
		{"Ich möchte mit einem echten Menschen reden", "de"},
		{"Bitte verbinden Sie mich mit einem Mitarbeiter", "de"},
		{"Does the agent ship to Canada?", ""},
		{"How long does shipping take?", ""},
		{"I need a person to assemble the tent", ""},
		{"Is the tent big enough for one person and a dog?", ""},
		{"Wie lange dauert der Versand?", ""},
		{"Je voudrais parler à un conseiller", "fr"},
		{"Puis-je parler à quelqu'un, s'il vous plaît ?", "fr"},
		{"Combien coûte la livraison par personne ?", ""},
		{"¿Puedo hablar con una persona?", "es"},
		{"Quiero hablar con un agente, por favor", "es"},
		{"¿Cuánto cuesta por persona?", ""},
		{"Vorrei parlare con un operatore", "it"},
		{"Quanto costa per persona?", ""},
		{"Kan ik met een medewerker praten?", "nl"},
		{"medewerker graag", "nl"},
		{"Wat kost het per persoon?", ""},
		{"Posso falar com uma pessoa?", "pt"},
		{"Qual é o preço por pessoa?", ""},
		{"Chcę porozmawiać z konsultantem", "pl"},
		{"Ile kosztuje wysyłka na osobę?", ""},
		{"", ""},
	} {
		l, ok := asksForPerson(tc.message)
		if ok != (tc.want != "") || ok && l.tag != tc.want {
			t.Errorf("asksForPerson(%q) = %q, %v; want %q", tc.message, l.tag, ok, tc.want)
		}
	}
}

func TestPersonLanguageFor(t *testing.T) {
	for locale, want := range map[string]string{"": "en", "en": "en", "de": "de", "de-AT": "de", "fr-CA": "fr", "pl": "pl", "ja": "en"} {
		if got := personLanguageFor(locale).tag; got != want {
			t.Errorf("personLanguageFor(%q) = %q, want %q", locale, got, want)
		}
	}
}
