package widget

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSizeBudget(t *testing.T) {
	n := len(Gzip(Script("https://chat.example.com")))
	t.Logf("widget.js: %d bytes, %d gzipped (budget %d)", len(source), n, MaxGzipBytes)
	if n > MaxGzipBytes {
		t.Errorf("widget.js is %d bytes gzipped, over its budget of %d", n, MaxGzipBytes)
	}
}

func TestScriptNamesTheAPI(t *testing.T) {
	s := string(Script(`https://chat.example.com/"x`))
	if !strings.Contains(s, `var API = "https://chat.example.com/\"x";`) {
		t.Errorf("the API address is not written in as a JavaScript string")
	}
	if !bytes.Contains(Script(""), []byte(apiPlaceholder)) {
		t.Error("without an address the script must keep its placeholder and use its own origin")
	}
}

func get(t *testing.T, h http.Handler, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/widget.js", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandler(t *testing.T) {
	h := Handler("https://chat.example.com")
	plain := get(t, h)
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" || !strings.Contains(plain.Body.String(), "https://chat.example.com") {
		t.Fatalf("plain: %d %q", plain.Code, plain.Header().Get("Content-Encoding"))
	}
	for name, want := range map[string]string{
		"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=300",
		"Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff", "Vary": "Accept-Encoding",
	} {
		if got := plain.Header().Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	zipped := get(t, h, "Accept-Encoding", "br, gzip;q=0.8")
	if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Fatalf("gzip: encoding %q, ETag %q (plain %q)", zipped.Header().Get("Content-Encoding"), zipped.Header().Get("ETag"), plain.Header().Get("ETag"))
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain.Body.Bytes()) {
		t.Errorf("the gzipped script differs from the plain one: %v", err)
	}
	if rec := get(t, h, "Accept-Encoding", "gzip;q=0"); rec.Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refuses it")
	}

	etag := plain.Header().Get("ETag")
	if rec := get(t, h, "If-None-Match", etag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match with the current ETag: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	if get(t, Handler("https://other.example.com")).Header().Get("ETag") == etag {
		t.Error("two API addresses share an ETag")
	}
}

// englishKeys are the keys of the English texts widget.js carries.
func englishKeys(t *testing.T) []string {
	t.Helper()
	table := regexp.MustCompile(`(?s)var TEXTS = \{\s*en: \{(.*?)\n    \}`).FindSubmatch(source)
	if table == nil {
		t.Fatal("no English table in widget.js")
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(\w+): "`).FindAllSubmatch(table[1], -1) {
		keys = append(keys, string(m[1]))
	}
	slices.Sort(keys)
	return keys
}

// Every language has each of English's texts, and no other: a text added to the widget in English is
// translated into every language (widget.js falls back to English meanwhile).
func TestEveryLanguageHasEveryText(t *testing.T) {
	want := englishKeys(t)
	if len(want) < 30 {
		t.Fatalf("only %d English keys read from widget.js", len(want))
	}
	langs := Languages()
	if !slices.Equal(langs, []string{"ar", "de", "es", "fr", "he", "it", "nl", "pl", "pt"}) {
		t.Errorf("languages %v", langs)
	}
	if !strings.Contains(string(source), `var LANGS = ["`+strings.Join(langs, `", "`)+`"];`) {
		t.Error("widget.js's LANGS are not the languages of texts/")
	}
	for _, lang := range langs {
		b, err := texts.ReadFile("texts/" + lang + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var table map[string]string
		if err := json.Unmarshal(b, &table); err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		for _, k := range want {
			if strings.TrimSpace(table[k]) == "" {
				t.Errorf("%s: no text for %q", lang, k)
			}
		}
		for k := range table {
			if !slices.Contains(want, k) {
				t.Errorf("%s: %q is no English key", lang, k)
			}
		}
	}
}

func TestTextsHandler(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /widget/{file}", TextsHandler())
	req := httptest.NewRequest(http.MethodGet, "/widget/fr.json", nil)
	res := httptest.NewRecorder()
	mux.ServeHTTP(res, req)
	var table map[string]string
	if err := json.Unmarshal(res.Body.Bytes(), &table); err != nil || res.Code != http.StatusOK || table["send"] != "Envoyer" ||
		res.Header().Get("Access-Control-Allow-Origin") != "*" || res.Header().Get("Content-Type") != "application/json" {
		t.Errorf("fr.json: %d %v %q %v", res.Code, res.Header(), table["send"], err)
	}
	for _, path := range []string{"/widget/en.json", "/widget/xx.json", "/widget/fr", "/widget/..%2fwidget.go"} {
		res := httptest.NewRecorder()
		mux.ServeHTTP(res, httptest.NewRequest(http.MethodGet, path, nil))
		if res.Code != http.StatusNotFound {
			t.Errorf("%s: %d", path, res.Code)
		}
	}
}
