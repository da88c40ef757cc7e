// Package ingest turns a document (a web page, an uploaded file) into sections of text a knowledge base can hold:
// the main content only, split at its headings (or, for a PDF, its pages) into items of a size the retriever and
// a model's context handle well. It reads bytes and returns text; it stores and fetches nothing.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Section is one item's worth of a document.
type Section struct {
	// Title is the section's heading path in the document ("Returns › Damaged items"), or the document's title
	// for the text before its first heading.
	Title string
	// Anchor is the fragment of the section's place, so that a citation links to it: its heading's id
	// ("damaged-items") in an HTML or Markdown document, "section=" and its heading's slug in a Word document
	// ("section=damaged-items"); empty when there is none, as for the text before a document's first heading.
	Anchor string
	// Text is the section's text: paragraphs separated by blank lines, list items as "- " lines.
	Text string
	// Page is the 1-based page of a PDF the text is on, 0 for other documents.
	Page int
}

// The errors Extract reports, wrapped with what was wrong; callers tell them apart with errors.Is and can show
// their text to the person who gave the document.
var (
	// ErrUnsupported: the document is of a type Extract does not read (an image, a spreadsheet, a legacy .doc).
	ErrUnsupported = errors.New("unsupported document type")
	// ErrNoText: the document holds no text, such as a scanned PDF without a text layer.
	ErrNoText = errors.New("no text in the document")
	// ErrTooLarge: the document, or what it unpacks to, passes the bounds below.
	ErrTooLarge = errors.New("document too large")
	// ErrMalformed: the document is not what its type says, or is damaged.
	ErrMalformed = errors.New("malformed document")
)

// The bounds of one document, so that a hostile file (a zip bomb, a PDF of a million pages) costs bounded
// memory and time. Callers bound the bytes they accept before this, usually tighter.
const (
	// MaxBytes is the largest document Extract reads.
	MaxBytes = 32 << 20
	// MaxTextBytes is the most text Extract takes out of one document: far more than a plan's knowledge holds.
	MaxTextBytes = 8 << 20
)

// The size of a section, in characters (runes). A section holds at most MaxSectionRunes, which the offline
// assistant indexes as one passage (runtime/assistant's maxItemChars) and which is a few paragraphs of a model's
// context; a longer one is split at paragraphs, else sentences, into balanced parts. Sections shorter than
// minSectionRunes take in the subsections that follow while they fit, so that a heading over one line is not an
// item alone.
const (
	MaxSectionRunes = 1500
	minSectionRunes = 200
)

// kind is a document type Extract reads.
type kind int

const (
	kindUnknown kind = iota
	kindHTML
	kindMarkdown
	kindText
	kindCSV
	kindPDF
	kindDOCX
)

// Extract returns the sections of the document body, in the document's order. name is its file name or URL
// path (its extension is a hint of its type), contentType its media type when known ("" or
// application/octet-stream otherwise: the extension and the bytes decide). pageURL is the address of a web page,
// which resolves its relative links, or nil. It fails with an error wrapping ErrUnsupported, ErrNoText,
// ErrTooLarge or ErrMalformed; ctx bounds the time spent on a long document.
func Extract(ctx context.Context, name, contentType string, body []byte, pageURL *url.URL) ([]Section, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, len(body), MaxBytes)
	}
	media, params, _ := mime.ParseMediaType(contentType)
	var (
		parts []part
		err   error
	)
	switch k := kindOf(name, media, body); k {
	case kindHTML:
		parts, err = extractHTML(body, params["charset"], pageURL)
	case kindMarkdown:
		parts, err = extractMarkdown(decodeText(body, params["charset"]), stem(name))
	case kindText:
		parts = extractText(decodeText(body, params["charset"]), stem(name))
	case kindCSV:
		parts, err = extractCSV(decodeText(body, params["charset"]))
	case kindPDF:
		parts, err = extractPDF(ctx, body, stem(name))
	case kindDOCX:
		parts, err = extractDOCX(ctx, body, stem(name))
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, describe(name, media))
	}
	if err != nil {
		return nil, err
	}
	sections := normalize(parts)
	if len(sections) == 0 {
		return nil, ErrNoText
	}
	return sections, nil
}

// kindOf tells the document's type: a specific media type first, since a web server knows what it serves; else
// the file name's extension, since a browser uploads Markdown and CSV files under generic types; else the bytes.
func kindOf(name, media string, body []byte) kind {
	switch media {
	case "text/html", "application/xhtml+xml":
		return kindHTML
	case "text/markdown", "text/x-markdown":
		return kindMarkdown
	case "text/csv", "application/csv", "text/tab-separated-values":
		return kindCSV
	case "application/pdf":
		return kindPDF
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return kindDOCX
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return kindHTML
	case ".md", ".markdown", ".mdown", ".mkd":
		return kindMarkdown
	case ".txt", ".text":
		return kindText
	case ".csv", ".tsv":
		return kindCSV
	case ".pdf":
		return kindPDF
	case ".docx":
		return kindDOCX
	}
	if media != "" && media != "application/octet-stream" && media != "text/plain" {
		return kindUnknown // an image, a spreadsheet, a .doc: not a type read here whatever the bytes look like
	}
	switch sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(body)); sniffed {
	case "text/html":
		return kindHTML
	case "application/pdf":
		return kindPDF
	case "text/plain":
		return kindText
	}
	return kindUnknown
}

// describe names a document's type in an error.
func describe(name, media string) string {
	switch {
	case media != "" && media != "application/octet-stream":
		return media
	case path.Ext(name) != "":
		return strings.ToLower(path.Ext(name)) + " files"
	}
	return "unrecognised content"
}

// stem is a file name without its directory and extension, a document's title when it has none of its own.
func stem(name string) string {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if base == "." || base == "/" {
		return ""
	}
	return strings.TrimSuffix(base, path.Ext(base))
}
