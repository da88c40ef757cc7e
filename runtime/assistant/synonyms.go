package assistant

import "slices"

// synonymGroups are words that shoppers and help pages use for the same thing, and British and American spellings.
// They are general shop vocabulary, not any one merchant's; a query word also matches the other words of its
// groups, at synonymFactor.
var synonymGroups = [][]string{
	{"buy", "purchase"},
	{"cost", "price", "fee"},
	{"cheap", "cheaper", "price"},
	{"deliver", "delivery", "ship", "shipping"},
	{"express", "expedited"},
	{"fuel", "gas"},
	{"swap", "exchange"},
	{"log", "login", "signin"},
	{"phone", "call", "telephone"},
	{"talk", "speak", "contact", "call"},
	{"person", "human", "agent", "representative"},
	{"wash", "clean", "launder"},
	{"warranty", "guarantee"},
	{"jacket", "coat"},
	{"backpack", "pack", "rucksack"},
	{"trousers", "pants"},
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
}

// synonyms maps a stem to the stems of its synonyms; built once from synonymGroups and never changed.
var synonyms = buildSynonyms(synonymGroups)

func buildSynonyms(groups [][]string) map[string][]string {
	out := make(map[string][]string)
	for _, g := range groups {
		for _, a := range g {
			for _, b := range g {
				sa, sb := stem(a), stem(b)
				if sa != sb && !slices.Contains(out[sa], sb) {
					out[sa] = append(out[sa], sb)
				}
			}
		}
	}
	return out
}
