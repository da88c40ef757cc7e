package lang

import "slices"

// synonymGroups are words that customers and help pages use for the same thing, British and American spellings,
// and the informal words and abbreviations visitors type for common ones ("telly", "quid", "yr"). They are
// general vocabulary of buying and of asking for help, never a business's products ("coat" and "jacket" are two
// things a shop may sell); a query word also matches the other words of its groups.
var synonymGroups = [][]string{
	{"buy", "purchase"},
	{"cost", "price", "fee"},
	{"cheap", "cheaper", "price"},
	{"deliver", "delivery", "ship", "shipping"},
	{"express", "expedited"},
	{"swap", "exchange"},
	{"log", "login", "signin"},
	{"phone", "call", "telephone"},
	{"talk", "speak", "contact", "call"},
	{"person", "human", "agent", "representative"},
	{"wash", "clean", "launder"},
	{"warranty", "guarantee"},
	{"kid", "child", "children"},
	{"address", "location"},
	{"colour", "color"},
	{"programme", "program"},
	{"litre", "liter"},
	{"centre", "center"},
	{"metre", "meter"},
	{"aluminium", "aluminum"},
	{"catalogue", "catalog"},
	{"favourite", "favorite"},
	{"licence", "license"},
	{"fibre", "fiber"},
	{"grey", "gray"},
	{"telly", "tv", "television"},
	{"quid", "pound"},
	{"dosh", "money"},
	{"yr", "yrs", "year"},
}

// englishSynonyms maps a stem to the stems of its synonyms; built once from synonymGroups and never changed.
var englishSynonyms = buildSynonyms(synonymGroups)

func buildSynonyms(groups [][]string) map[string][]string {
	out := make(map[string][]string)
	for _, g := range groups {
		for _, a := range g {
			for _, b := range g {
				sa, sb := stemEnglish(a), stemEnglish(b)
				if sa != sb && !slices.Contains(out[sa], sb) {
					out[sa] = append(out[sa], sb)
				}
			}
		}
	}
	return out
}
