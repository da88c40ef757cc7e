// Package widget serves widget.js, the chat widget merchants embed with one script tag.
package widget

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

//go:embed widget.js
var source []byte

// texts are the widget's own words in each language but English, which widget.js carries itself: one JSON
// object a language, with English's keys.
//
//go:embed texts/*.json
var texts embed.FS

// apiPlaceholder is the JavaScript string literal in widget.js that Script replaces with the API's address.
const apiPlaceholder = `"__PARLEY_API_URL__"`

// MaxGzipBytes is the widget's size budget, gzipped.
const MaxGzipBytes = 12 * 1024

// Script returns widget.js with apiURL as the address of the API. An empty apiURL leaves the script to use the
// origin it was loaded from.
func Script(apiURL string) []byte {
	if apiURL == "" {
		return bytes.Clone(source)
	}
	literal, _ := json.Marshal(apiURL) // a string always marshals
	return bytes.Replace(source, []byte(apiPlaceholder), literal, 1)
}

// Gzip compresses b as served to browsers that accept gzip.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level never fails
	_, _ = zw.Write(b)                                       // writes to a bytes.Buffer never fail
	_ = zw.Close()
	return buf.Bytes()
}

// representation is one encoding of the script with its ETag.
type representation struct {
	body []byte
	etag string
}

func newRepresentation(body []byte, suffix string) representation {
	sum := sha256.Sum256(body)
	return representation{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + suffix + `"`}
}

// Handler serves widget.js for the API at apiURL, gzipped for browsers that accept it. The script is public and
// the same for every merchant, so any site may load it (CORS *); caches keep it five minutes and then revalidate
// it with its ETag.
func Handler(apiURL string) http.Handler {
	plain := Script(apiURL)
	script := newDocument(plain, "text/javascript; charset=utf-8")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { script.serve(w, r, "widget.js") })
}

// Languages are the languages of the widget's texts besides English, as lowercase ISO 639-1 codes.
func Languages() []string {
	names, _ := fs.Glob(texts, "texts/*.json") // the pattern is valid
	langs := make([]string, 0, len(names))
	for _, n := range names {
		langs = append(langs, strings.TrimSuffix(path.Base(n), ".json"))
	}
	slices.Sort(langs)
	return langs
}

// TextsHandler serves the widget's texts in one language at a path ending in /{lang}.json (the path value
// "file"), as widget.js fetches them for a visitor's language; other files are not found. Like the script, they
// are public, the same for every merchant, and cached.
func TextsHandler() http.Handler {
	docs := map[string]document{}
	for _, lang := range Languages() {
		b, _ := texts.ReadFile("texts/" + lang + ".json") // listed by Languages
		docs[lang+".json"] = newDocument(b, "application/json")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file := r.PathValue("file")
		doc, ok := docs[file]
		if !ok {
			http.NotFound(w, r)
			return
		}
		doc.serve(w, r, file)
	})
}

// document is a public file in its two encodings.
type document struct {
	identity, gzipped representation
	contentType       string
}

func newDocument(b []byte, contentType string) document {
	return document{identity: newRepresentation(b, ""), gzipped: newRepresentation(Gzip(b), "-gz"), contentType: contentType}
}

func (d document) serve(w http.ResponseWriter, r *http.Request, name string) {
	rep := d.identity
	h := w.Header()
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		rep = d.gzipped
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", d.contentType)
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", rep.etag)
	h.Add("Vary", "Accept-Encoding")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	// ServeContent answers If-None-Match with 304 and HEAD without a body.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(rep.body))
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}
