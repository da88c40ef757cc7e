package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExtract(t *testing.T) {
	page, _ := url.Parse("https://acme.example/help/returns")
	type want struct{ title, anchor, has string }
	tests := []struct {
		file, contentType string
		want              []want
		absent            []string // text of no section
	}{
		{
			file: "returns.html", contentType: "text/html; charset=utf-8",
			want: []want{
				{"Returns and refunds", "", "within 30 days of delivery"},
				{"Returns and refunds › How to return an item", "how-to-return", "- Select the items and a reason."},
				{"Returns and refunds › Refunds", "refunds", "5 business days"},
				{"Returns and refunds › Refunds › Damaged or faulty items", "damaged-items", "Tents | 2 years\nStoves | 3 years"},
				{"Returns and refunds › Exchanges", "exchanges", "We do not swap items"},
			},
			absent: []string{"cookies", "Backpacks", "Imprint", "Popular articles", "Size guide", "dataLayer", "sans-serif"},
		},
		{
			file:   "sizes.html", // a short page readability finds no article in: read less its navigation and footer
			want:   []want{{"Size guide", "", "Our jackets run small: order one size up."}},
			absent: []string{"Home", "Tents", "Contact us"},
		},
		{
			file: "camping-stoves.md", contentType: "application/octet-stream",
			want: []want{
				// the introduction is short: the first heading's section joins it
				{"Camping stoves", "", "(EN 417), sold in every outdoor shop in Europe.\n\nChoosing a stove\n\nA canister stove is light"},
				{"Camping stoves › Safety", "safety", "- Keep the stove on flat ground, away from dry grass.\n  - In national parks, check the fire ban first."},
			},
			absent: []string{"sidebar_position", "**", "](https"},
		},
		{
			file: "faq.csv", contentType: "text/csv",
			want: []want{
				{"Wie lange dauert der Versand?", "", "Innerhalb Deutschlands 1 bis 2 Werktage"},
				{"Kann ich auf Rechnung zahlen?", "", "Ja, ab der zweiten Bestellung; die Rechnung ist in 14 Tagen fällig."},
				{"Gibt es Gutscheine?", "", "25, 50 und 100 Euro"},
			},
		},
		{
			file: "stores.csv", contentType: "application/vnd.ms-excel", // what Windows browsers upload CSV files as
			want: []want{
				{"Berlin", "", "City: Berlin\nAddress: Torstraße 12, 10119 Berlin\nOpening hours: Mon–Sat 10:00–20:00"},
				{"Munich", "", "Opening hours: Mon–Fri 10:00–19:00; Sat 10:00–18:00"},
			},
		},
		{
			file: "care.txt", contentType: "text/plain",
			want: []want{{"care", "", "Care of down sleeping bags\n\nWash a down bag rarely"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Extract(t.Context(), tt.file, tt.contentType, read(t, tt.file), page)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d sections, want %d: %#v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Title != w.title || g.Anchor != w.anchor || !strings.Contains(g.Text, w.has) || g.Page != 0 {
					t.Errorf("section %d = %q #%q %q, want %q #%q containing %q", i, g.Title, g.Anchor, g.Text, w.title, w.anchor, w.has)
				}
				for _, a := range tt.absent {
					if strings.Contains(g.Text, a) || strings.Contains(g.Title, a) {
						t.Errorf("section %d holds %q, which is not the page's content: %q", i, a, g.Text)
					}
				}
			}
		})
	}
}

func TestExtractRefuses(t *testing.T) {
	big := make([]byte, MaxBytes+1)
	tests := []struct {
		name, file, contentType string
		body                    []byte
		want                    error
	}{
		{"an image", "photo.png", "image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00"), ErrUnsupported},
		{"a spreadsheet", "prices.xlsx", "", []byte("PK\x03\x04"), ErrUnsupported},
		{"a legacy Word file", "manual.doc", "application/msword", []byte("\xd0\xcf\x11\xe0"), ErrUnsupported},
		{"binary bytes without a name", "", "", []byte{0, 1, 2, 3, 0xff, 0xfe}, ErrUnsupported},
		{"an empty page", "index.html", "text/html", []byte("<html><body><nav>Home</nav></body></html>"), ErrNoText},
		{"a blank text file", "notes.txt", "", []byte(" \n\n\t\n"), ErrNoText},
		{"a CSV file of a header alone", "faq.csv", "", []byte("question,answer\n"), ErrNoText},
		{"an empty CSV file", "faq.csv", "", nil, ErrNoText},
		{"a ragged CSV file", "faq.csv", "", []byte("question,answer\n\"open quote,x\n"), nil},
		{"a file too large", "big.txt", "", big, ErrTooLarge},
		{"a page of too many elements", "many.html", "", []byte(strings.Repeat("<p>a</p>", maxPageNodes/2+1)), ErrTooLarge},
		{"a CSV row of too many fields", "wide.csv", "", []byte("a\n" + strings.Repeat("x,", maxCSVFields+1)), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extract(t.Context(), tt.file, tt.contentType, tt.body, nil)
			if tt.want == nil {
				if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoText) {
					t.Fatalf("Extract: %v, want sections, ErrMalformed or ErrNoText", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Extract: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestExtractDecodesLegacyText(t *testing.T) {
	// A CSV file saved by a spreadsheet on Windows: Windows-1252, not UTF-8.
	got, err := Extract(t.Context(), "faq.csv", "", []byte("question;answer\nGr\xf6\xdfen?;S bis XL, f\xfcr jede Gr\xf6\xdfe.\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Title != "Größen?" || got[0].Text != "S bis XL, für jede Größe." {
		t.Fatalf("got %+v", got[0])
	}
	// An HTML page in the charset its meta element names.
	got, err = Extract(t.Context(), "p.html", "", []byte(`<meta charset="iso-8859-1"><h1>Gr`+"\xfc"+`n</h1><p>Caf`+"\xe9"+` au lait.</p>`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Title != "Grün" || got[0].Text != "Café au lait." {
		t.Fatalf("got %+v", got[0])
	}
}

func TestExtractSizesSections(t *testing.T) {
	sentence := "The tent pitches in four minutes with its colour-coded poles and clips. "
	long := strings.Repeat(sentence, 80) // about 5,800 characters in one paragraph
	md := "# Tents\n\nOne line.\n\n## Pitching\n\n" + long + "\n\n## Tiny\n\nA.\n\n### Detail\n\nThe detail.\n\n## Last\n\nThe end of the guide.\n"
	got, err := Extract(t.Context(), "tents.md", "", []byte(md), nil)
	if err != nil {
		t.Fatal(err)
	}
	var pitching []Section
	for _, s := range got {
		if n := utf8.RuneCountInString(s.Text); n > MaxSectionRunes {
			t.Errorf("section %q holds %d characters, more than %d", s.Title, n, MaxSectionRunes)
		}
		if s.Title == "Tents › Pitching" {
			pitching = append(pitching, s)
		}
	}
	// The long section is split at sentences into balanced parts, all of the text and nothing else.
	if len(pitching) != 4 {
		t.Fatalf("the long section became %d parts, want 4: %+v", len(pitching), got)
	}
	var joined []string
	for _, p := range pitching {
		if n := utf8.RuneCountInString(p.Text); n < MaxSectionRunes/2 {
			t.Errorf("a part of %d characters: the parts are not balanced", n)
		}
		if !strings.HasSuffix(p.Text, ".") || p.Anchor != "pitching" {
			t.Errorf("part %q (#%s) does not end at a sentence or lost its anchor", p.Text[len(p.Text)-20:], p.Anchor)
		}
		joined = append(joined, p.Text)
	}
	if strings.Join(joined, " ") != strings.TrimSpace(long) {
		t.Error("the parts of the long section do not make up its text")
	}
	// The one-line introduction takes in its subsection only if both fit, which they do not: it stays alone.
	// The tiny section takes in its subsection, whose heading stays in the text, but not its sibling.
	var titles []string
	for _, s := range got {
		titles = append(titles, s.Title)
	}
	if want := []string{"Tents", "Tents › Pitching", "Tents › Pitching", "Tents › Pitching", "Tents › Pitching", "Tents › Tiny", "Tents › Last"}; !slices.Equal(titles, want) {
		t.Fatalf("titles %q, want %q", titles, want)
	}
	if tiny := got[5]; tiny.Text != "A.\n\nDetail\n\nThe detail." || tiny.Anchor != "tiny" {
		t.Fatalf("the tiny section and its subsection: %q #%s", tiny.Text, tiny.Anchor)
	}
}

func TestSplitWithoutSentences(t *testing.T) {
	// A text without sentence ends is cut at spaces, and a run without spaces anywhere.
	for _, text := range []string{strings.Repeat("word ", 1000), strings.Repeat("ü", 4000)} {
		parts := split(strings.TrimSpace(text), MaxSectionRunes)
		if len(parts) != 4 && len(parts) != 3 {
			t.Errorf("%d parts", len(parts))
		}
		total := 0
		for _, p := range parts {
			if n := utf8.RuneCountInString(p); n > MaxSectionRunes || !utf8.ValidString(p) {
				t.Errorf("a part of %d characters (valid UTF-8: %v)", n, utf8.ValidString(p))
			}
			total += utf8.RuneCountInString(strings.ReplaceAll(p, " ", ""))
		}
		if want := utf8.RuneCountInString(strings.ReplaceAll(text, " ", "")); total != want {
			t.Errorf("the parts hold %d characters, want %d", total, want)
		}
	}
}

func TestLinks(t *testing.T) {
	page, _ := url.Parse("https://acme.example/help/returns?lang=en")
	var got []string
	for _, u := range Links(read(t, "returns.html"), page) {
		got = append(got, u.String())
	}
	want := []string{
		"https://acme.example/", "https://acme.example/tents", "https://acme.example/backpacks",
		"https://acme.example/help/shipping", "https://acme.example/help/returns", "https://acme.example/account/orders",
		"https://acme.example/help/sizes", "https://acme.example/imprint", "https://acme.example/privacy",
		"https://twitter.example/acme",
	}
	if !slices.Equal(got, want) { // the nofollow account link and the mailto link are left out, fragments dropped
		t.Fatalf("Links =\n%q\nwant\n%q", got, want)
	}
	got = nil
	for _, u := range Links(read(t, "sizes.html"), page) { // the base element's address resolves the links
		got = append(got, u.String())
	}
	if want := []string{"https://shop.example/", "https://shop.example/guides/tents.html"}; !slices.Equal(got, want) {
		t.Fatalf("Links = %q, want %q", got, want)
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		name, media string
		body        string
		want        kind
	}{
		{"/help/returns", "text/html", "", kindHTML},
		{"/docs/page.php", "text/html", "", kindHTML},
		{"README.md", "text/plain", "", kindMarkdown},
		{"README.md", "", "", kindMarkdown},
		{"faq.csv", "application/vnd.ms-excel", "", kindCSV},
		{"report", "application/pdf", "", kindPDF},
		{"upload", "", "%PDF-1.7\n", kindPDF},
		{"upload", "", "<!DOCTYPE html><p>x", kindHTML},
		{"upload", "application/octet-stream", "plain words", kindText},
		{"photo.jpg", "image/jpeg", "", kindUnknown},
		{"data", "application/json", "{}", kindUnknown},
	}
	for _, tt := range tests {
		if got := kindOf(tt.name, tt.media, []byte(tt.body)); got != tt.want {
			t.Errorf("kindOf(%q, %q) = %v, want %v", tt.name, tt.media, got, tt.want)
		}
	}
}

//go:generate go run ./testdata/gen

func TestExtractFiles(t *testing.T) {
	type want struct {
		title  string
		page   int
		anchor string
		text   string
	}
	tests := []struct {
		file, contentType string
		want              []want
	}{
		{
			file: "tent-care.pdf", contentType: "application/pdf",
			want: []want{ // a section per page with text, the blank third page none; the heading a paragraph
				{"Tent care guide", 1, "", "Tent care guide\n\nLook after your tent and it lasts for a decade of trips.\n\nClean it with lukewarm water and a sponge. Never use detergent or a washing machine: both strip the coating."},
				{"Tent care guide", 2, "", "Storing your tent\n\nStore the tent dry and loosely packed, in a cool place away from sunlight. Packed wet, it grows mould within two days."},
			},
		},
		{
			file: "warranty.docx", contentType: "application/octet-stream",
			want: []want{ // Title, then headings by their localised style IDs, which styles.xml names
				// the tiny introduction takes in the subsection that follows, its heading kept in the text
				{"Warranty conditions", 0, "section=warranty-conditions", "Every Acme product carries a warranty against defects in materials and workmanship.\n\nWhat the warranty covers\n\nSeams, zips, poles and buckles that fail in normal use, for two years from delivery.\n\n- Tents and shelters\n- Backpacks"},
				{"Warranty conditions › What the warranty covers › Stoves", 0, "section=stoves", "Stoves are covered for three years.\nKeep the receipt.\n\nPart | Years\nBurner | 3"},
				{"Warranty conditions › What it does not cover", 0, "section=what-it-does-not-cover", "Wear and tear, damage from misuse, and repairs made by others than Acme."},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Extract(t.Context(), tt.file, tt.contentType, read(t, tt.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d sections, want %d: %#v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				if g := got[i]; g.Title != w.title || g.Page != w.page || g.Text != w.text || g.Anchor != w.anchor {
					t.Errorf("section %d = %q p%d #%s %q, want %q p%d #%s %q", i, g.Title, g.Page, g.Anchor, g.Text, w.title, w.page, w.anchor, w.text)
				}
			}
		})
	}
}

func TestExtractRefusesFiles(t *testing.T) {
	pdf := read(t, "tent-care.pdf")
	tests := []struct {
		name, file string
		body       []byte
		want       error
	}{
		{"a scanned PDF, without a text layer", "scan.pdf", read(t, "scan.pdf"), ErrNoText},
		{"a truncated PDF", "cut.pdf", pdf[:len(pdf)/2], ErrMalformed},
		{"an HTML page named .pdf", "page.pdf", []byte("<html><p>hello</p></html>"), ErrMalformed},
		{"a zip that is no Word document", "files.docx", zipOf(t, map[string]string{"a.txt": "hello"}), ErrMalformed},
		{"not a zip at all", "letter.docx", []byte("Dear customer"), ErrMalformed},
		{"a zip bomb", "bomb.docx", zipOf(t, map[string]string{"word/document.xml": strings.Repeat(" ", maxUnpackedBytes+1)}), ErrTooLarge},
		{"a Word document without text", "empty.docx", zipOf(t, map[string]string{"word/document.xml": `<w:document xmlns:w="` + wordNS + `"><w:body><w:p/></w:body></w:document>`}), ErrNoText},
		{"a page of too much content", "dense.pdf", densePDF(maxPageStream + 4096), ErrTooLarge},
		{"broken XML", "broken.docx", zipOf(t, map[string]string{"word/document.xml": `<w:document xmlns:w="` + wordNS + `"><w:body><w:p>`}), ErrMalformed},
		// Reading stops at the bound: what comes after it, broken here, is not read.
		{"a Word document of too much text", "long.docx", zipOf(t, map[string]string{"word/document.xml": `<w:document xmlns:w="` + wordNS + `"><w:body>` +
			strings.Repeat(`<w:p><w:r><w:t>`+strings.Repeat("word ", 200)+`</w:t></w:r></w:p>`, MaxTextBytes/900) + `<w:p>`}), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Extract(t.Context(), tt.file, "", tt.body, nil); !errors.Is(err, tt.want) {
				t.Fatalf("Extract: %v, want %v", err, tt.want)
			}
		})
	}
}

// zipOf is a zip file of the files, deflated.
// TestWordSectionAnchors: each section of a Word document has a fragment of its own, even under a heading the
// document repeats or one without a letter of ASCII, and the same file gives the same fragments again, so
// that citations of a file uploaded again link as before.
func TestWordSectionAnchors(t *testing.T) {
	p := func(style, text string) string {
		return `<w:p><w:pPr><w:pStyle w:val="` + style + `"/></w:pPr><w:r><w:t>` + text + `</w:t></w:r></w:p>`
	}
	long := strings.Repeat("Pack the tent dry and keep it away from the sun. ", 5)
	doc := zipOf(t, map[string]string{"word/document.xml": `<w:document xmlns:w="` + wordNS + `"><w:body>` +
		p("Normal", "Read this first.") +
		p("Heading1", "Tents") + p("Heading2", "Care &amp; storage") + p("Normal", long) +
		p("Heading1", "Stoves") + p("Heading2", "Care &amp; storage") + p("Normal", long) +
		p("Heading1", "Zelte") + p("Heading2", "Pflege") + p("Normal", long) +
		p("Heading1", "テント") + p("Normal", long) + p("Heading1", "ストーブ") + p("Normal", long) +
		`</w:body></w:document>`})
	want := []string{"", "section=care--storage", "section=care--storage-1", "section=pflege", "section=heading", "section=heading-1"}
	for range 2 {
		got, err := Extract(t.Context(), "gear.docx", "", doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		var anchors []string
		for _, sec := range got {
			anchors = append(anchors, sec.Anchor)
		}
		if !slices.Equal(anchors, want) {
			t.Errorf("anchors %q, want %q", anchors, want)
		}
	}
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, body := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestExtractStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Extract(ctx, "tent-care.pdf", "", read(t, "tent-care.pdf"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract: %v, want the context's error", err)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"  \t\n ":                          "",
		"Free  returns\n within\t30 days ": "Free returns within 30 days",
		"\u00a0Größe\u2003M\u00a0":         "Größe M",
		"bad \xff byte":                    "bad \uFFFD byte",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}
