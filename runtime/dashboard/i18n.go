package dashboard

import (
	"net/http"
	"slices"

	"golang.org/x/text/language"
)

// langCookie keeps the language chosen with ?lang=.
const langCookie = "parley_lang"

// languages are the dashboard's languages, the first the default.
var languages = []string{"en", "de"}

// requestLanguage is the request's language: the one chosen, else the browser's first supported preference.
func requestLanguage(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); slices.Contains(languages, l) {
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && slices.Contains(languages, c.Value) {
		return c.Value
	}
	// The browser's preferences, most preferred first (by their q-values).
	tags, _, _ := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	for _, tag := range tags {
		if base, _ := tag.Base(); slices.Contains(languages, base.String()) {
			return base.String()
		}
	}
	return languages[0]
}

// languageLink is the address of the page the request asked for, but for its language, up to the language
// code to append: the query is kept. A page that answers a POST cannot be asked for again, so its links lead to
// the dashboard's home.
func languageLink(r *http.Request) string {
	if r.Method != http.MethodGet {
		return prefix + "?lang="
	}
	q := r.URL.Query()
	q.Del("lang")
	if len(q) == 0 {
		return r.URL.Path + "?lang="
	}
	return r.URL.Path + "?" + q.Encode() + "&lang="
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
