package dashboard

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
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
	for _, msg := range knowledgeProblems {
		if _, ok := german[msg]; !ok {
			t.Errorf("knowledge problem %q has no German", msg)
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
		{"", "", "de;q=0.1, en;q=0.9", "en"},
		{"", "", "fr, de-AT;q=0.5", "de"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/dashboard/?lang="+tc.query, nil)
		if tc.cookie != "" {
			r.Header.Set("Cookie", langCookie+"="+tc.cookie)
		}
		r.Header.Set("Accept-Language", tc.accept)
		if got := requestLanguage(r); got != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
	}
}

// Every problem chat's validation reports has the dashboard's words, with the limit filled in.
func TestKnowledgeProblems(t *testing.T) {
	long := strings.Repeat("x", chat.MaxContentRunes+1)
	for _, in := range []chat.KnowledgeInput{
		{},
		{Title: long, Content: long, URL: "ftp://a.example", Tags: []string{"", long}},
		{Title: "\x00", Content: "\x00", URL: "\x00", Tags: append(make([]string, chat.MaxTags), "\x00")},
		{Title: "t", Content: "c", URL: "https://a.example/" + long},
	} {
		_, problems := in.Validate()
		for _, p := range problems {
			for _, lang := range languages {
				if got := knowledgeProblem(lang, p); got == p.Error() || strings.Contains(got, "%") {
					t.Errorf("%s: %+v is worded %q", lang, p, got)
				}
			}
		}
	}
	if got := knowledgeProblem("de", chat.FieldError{Field: chat.FieldTitle, Problem: chat.ProblemTooLong, Limit: 200}); got != "der Titel ist länger als 200 Zeichen" {
		t.Errorf("German: %q", got)
	}
}

// The language links keep the page and its query, but a page that answers a POST, which cannot be asked for
// again, links to the dashboard's home.
func TestLanguageLink(t *testing.T) {
	for _, tc := range []struct{ method, target, want string }{
		{http.MethodGet, "/dashboard/knowledge", "/dashboard/knowledge?lang="},
		{http.MethodGet, "/dashboard/conversations?q=refund&lead=yes&lang=de", "/dashboard/conversations?lead=yes&q=refund&lang="},
		{http.MethodPost, "/dashboard/keys", "/dashboard/?lang="},
	} {
		if got := languageLink(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.target, got, tc.want)
		}
	}
}
