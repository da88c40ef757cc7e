package dashboard

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// Every text the templates translate has its German.
func TestEveryTemplateTextIsInGerman(t *testing.T) {
	texts := regexp.MustCompile(`\{\{tf? "([^"]+)"`)
	names, err := templateNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(names, "layout") {
		data, err := files.ReadFile("templates/" + name + ".html")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range texts.FindAllSubmatch(data, -1) {
			if _, ok := german[string(m[1])]; !ok {
				t.Errorf("%s.html: %q has no German", name, m[1])
			}
		}
	}
	for _, msg := range notices {
		if _, ok := german[msg]; !ok {
			t.Errorf("notice %q has no German", msg)
		}
	}
}

func TestLanguage(t *testing.T) {
	for _, tc := range []struct{ query, cookie, accept, want string }{
		{"", "", "", "en"},
		{"", "", "de-CH,de;q=0.9,en;q=0.8", "de"},
		{"", "", "fr-FR,fr;q=0.9", "en"},
		{"", "de", "en", "de"},
		{"en", "de", "de", "en"},
		{"xx", "", "de", "de"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/dashboard/?lang="+tc.query, nil)
		if tc.cookie != "" {
			r.Header.Set("Cookie", langCookie+"="+tc.cookie)
		}
		r.Header.Set("Accept-Language", tc.accept)
		if got := language(r); got != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
	}
}
