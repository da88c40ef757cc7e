package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
)

// maxUnpackedBytes bounds what one part of a DOCX decompresses to, so that a zip bomb costs bounded time and
// memory: far more than the text of any real document.
const maxUnpackedBytes = 64 << 20

// wordNS is the namespace of WordprocessingML's elements.
const wordNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// extractDOCX reads a Word document (Office Open XML), split at its Title and heading 1 to 3 paragraphs, which
// styles.xml names whatever the language of Word's interface; lists become "- " lines, tables "a | b" lines.
func extractDOCX(ctx context.Context, body []byte, name string) ([]part, error) {
	z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, fmt.Errorf("%w: not a DOCX (Office Open XML) file: %w", ErrMalformed, err)
	}
	levels, err := styleLevels(z)
	if err != nil {
		return nil, err
	}
	doc, err := openPart(z, mainPart(z))
	if errors.Is(err, errNoPart) {
		return nil, fmt.Errorf("%w: the file holds no Word document", ErrMalformed)
	}
	if err != nil {
		return nil, err
	}
	defer doc.Close()
	d := &docxReader{b: newBuilder(name), levels: levels, ids: parser.NewContext().IDs()}
	if err := d.read(ctx, xml.NewDecoder(doc)); err != nil {
		return nil, err
	}
	return d.b.finish()
}

// errNoPart is what openPart returns for a part the file does not hold.
var errNoPart = errors.New("no such part")

// mainPart is the path of the document's main part, which the package's relationships name.
func mainPart(z *zip.Reader) string {
	const fallback = "word/document.xml"
	rels, err := openPart(z, "_rels/.rels")
	if err != nil {
		return fallback
	}
	defer rels.Close()
	var r struct {
		Rels []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if xml.NewDecoder(rels).Decode(&r) != nil {
		return fallback
	}
	for _, rel := range r.Rels {
		if strings.HasSuffix(rel.Type, "/officeDocument") && rel.Target != "" {
			return strings.TrimPrefix(path.Clean("/"+rel.Target), "/")
		}
	}
	return fallback
}

// openPart opens a part of the package, its decompressed bytes bounded by maxUnpackedBytes.
func openPart(z *zip.Reader, name string) (io.ReadCloser, error) {
	for _, f := range z.File {
		if f.Name != name {
			continue
		}
		if f.UncompressedSize64 > maxUnpackedBytes {
			return nil, fmt.Errorf("%w: %s unpacks to more than %d bytes", ErrTooLarge, name, maxUnpackedBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
		}
		// The declared size can lie: the reader stops past the bound whatever it says.
		return &boundedPart{r: io.LimitReader(rc, maxUnpackedBytes+1), c: rc, name: name}, nil
	}
	return nil, errNoPart
}

// boundedPart fails with ErrTooLarge once a part gives more than maxUnpackedBytes.
type boundedPart struct {
	r    io.Reader
	c    io.Closer
	n    int64
	name string
}

func (p *boundedPart) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if p.n += int64(n); p.n > maxUnpackedBytes {
		return n, fmt.Errorf("%w: %s unpacks to more than %d bytes", ErrTooLarge, p.name, maxUnpackedBytes)
	}
	return n, err
}

func (p *boundedPart) Close() error { return p.c.Close() }

// styleLevels maps the document's paragraph style IDs to heading levels: 0 for the Title style, n for the style
// named "heading n" (the built-in names, which are English in every language of Word) or with an outline level.
func styleLevels(z *zip.Reader) (map[string]int, error) {
	levels := map[string]int{"Title": 0, "Heading1": 1, "Heading2": 2, "Heading3": 3}
	rc, err := openPart(z, "word/styles.xml")
	if errors.Is(err, errNoPart) {
		return levels, nil
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var styles struct {
		Styles []struct {
			ID   string `xml:"styleId,attr"`
			Name struct {
				Val string `xml:"val,attr"`
			} `xml:"name"`
			Outline *struct {
				Val int `xml:"val,attr"`
			} `xml:"pPr>outlineLvl"`
		} `xml:"style"`
	}
	if err := xml.NewDecoder(rc).Decode(&styles); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		return levels, nil // a damaged styles part leaves the headings of the built-in IDs
	}
	for _, s := range styles.Styles {
		name := strings.ToLower(s.Name.Val)
		switch {
		case name == "title":
			levels[s.ID] = 0
		case strings.HasPrefix(name, "heading "):
			if n, err := strconv.Atoi(strings.TrimPrefix(name, "heading ")); err == nil && n >= 1 {
				levels[s.ID] = n
			}
		case s.Outline != nil && s.Outline.Val >= 0 && s.Outline.Val < 9:
			levels[s.ID] = s.Outline.Val + 1
		}
	}
	return levels, nil
}

// docxReader reads document.xml's paragraphs, lists and tables into a builder.
type docxReader struct {
	b      *builder
	levels map[string]int
	title  bool       // whether the document has a Title paragraph: its headings sit one level below
	ids    parser.IDs // the headings' slugs, unique within the document
	list   []string   // the running list's items
	// the running paragraph
	text    strings.Builder
	style   string
	listed  bool
	inText  bool
	tables  int      // depth in tables
	rows    []string // the outermost table's rows
	cells   []string // the running row's cells
	cell    []string // the running cell's paragraphs
	visited int      // elements read, to check the context now and then
}

func (d *docxReader) read(ctx context.Context, dec *xml.Decoder) error {
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			d.endList()
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return err
			}
			return fmt.Errorf("%w: reading the document: %w", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if d.visited++; d.visited%4096 == 0 && ctx.Err() != nil {
				return fmt.Errorf("reading the document: %w", ctx.Err())
			}
			d.start(t)
		case xml.EndElement:
			if d.end(t); d.b.over {
				return nil // the builder's finish says it is too large; reading on would only cost memory
			}
		case xml.CharData:
			if d.inText {
				d.text.Write(t)
			}
		}
	}
}

func (d *docxReader) start(t xml.StartElement) {
	if t.Name.Space != wordNS {
		return
	}
	switch t.Name.Local {
	case "p":
		d.text.Reset()
		d.style, d.listed = "", false
	case "pStyle":
		d.style = wordAttr(t, "val")
	case "numPr":
		d.listed = true
	case "t":
		d.inText = true
	case "tab":
		d.text.WriteByte(' ')
	case "br", "cr":
		d.text.WriteByte('\n')
	case "tbl":
		if d.tables++; d.tables == 1 {
			d.endList()
			d.rows = nil
		}
	case "tr":
		if d.tables == 1 {
			d.cells = nil
		}
	case "tc":
		if d.tables == 1 {
			d.cell = nil
		}
	}
}

func (d *docxReader) end(t xml.EndElement) {
	if t.Name.Space != wordNS {
		return
	}
	switch t.Name.Local {
	case "t":
		d.inText = false
	case "p":
		d.paragraph()
	case "tc":
		if d.tables == 1 {
			d.cells = append(d.cells, strings.Join(d.cell, " "))
		}
	case "tr":
		if d.tables == 1 {
			d.rows = append(d.rows, strings.Join(d.cells, " | "))
		}
	case "tbl":
		if d.tables--; d.tables == 0 {
			d.b.para(strings.Join(d.rows, "\n"))
		}
	}
}

// paragraph ends a w:p: a heading starts a section, a list item joins the running list, a table cell's
// paragraph joins its cell.
func (d *docxReader) paragraph() {
	lines := strings.Split(d.text.String(), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	if d.tables > 0 {
		if text != "" {
			d.cell = append(d.cell, clean(text))
		}
		return
	}
	if text == "" {
		return
	}
	if level, ok := d.levels[d.style]; ok {
		if level == 0 {
			d.title = true
			level = 1
		} else if d.title {
			level++
		}
		if level <= maxHeadingLevel {
			d.endList()
			d.b.heading(level, text, sectionAnchor(d.ids, text))
			return
		}
	}
	if d.listed || strings.HasPrefix(strings.ToLower(d.style), "list") {
		d.list = append(d.list, "- "+text)
		return
	}
	d.endList()
	d.b.para(text)
}

// sectionAnchor is the fragment of a Word document's section, which has no anchor of its own: "section=" and
// its heading's slug, as Markdown's heading ids are made (the second "Returns" is returns-1), so that the
// sections' citations differ and a file uploaded again links each section as before. Like PDF's "page=3", it
// names a place rather than an element of a page.
func sectionAnchor(ids parser.IDs, heading string) string {
	return "section=" + string(ids.Generate([]byte(clean(heading)), ast.KindHeading))
}

func (d *docxReader) endList() {
	if len(d.list) > 0 {
		d.b.para(strings.Join(d.list, "\n"))
		d.list = nil
	}
}

func wordAttr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
