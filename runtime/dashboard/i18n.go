package dashboard

import (
	"net/http"
	"slices"
	"strings"
)

// langCookie keeps the language chosen with ?lang=.
const langCookie = "parley_lang"

// languages are the dashboard's languages, the first the default.
var languages = []string{"en", "de"}

// language is the request's language: the one chosen, else the browser's first supported preference.
func language(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); slices.Contains(languages, l) {
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && slices.Contains(languages, c.Value) {
		return c.Value
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if slices.Contains(languages, base) {
			return base
		}
	}
	return languages[0]
}

// translate returns the English text s in lang; the texts are their own keys.
func translate(lang, s string) string {
	if lang == "de" {
		if t, ok := german[s]; ok {
			return t
		}
	}
	return s
}
