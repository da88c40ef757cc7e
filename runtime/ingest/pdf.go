package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/ledongthuc/pdf"
)

// The bounds of a PDF: its pages, the page tree's depth, and what the content streams of one page and of the
// whole document decompress to. The library keeps every glyph of a page (a few hundred bytes each) until the page
// is read, so a page's content is bounded well above a dense page of text (tens of KiB) but far below what would
// hold the runtime's memory: BenchmarkExtractDensePDFPage measures the worst page.
const (
	// MaxPages is the most pages of a PDF Extract reads.
	MaxPages          = 2000
	maxPageTreeDepth  = 32
	maxPageStream     = 1 << 20
	maxDocumentStream = 32 << 20
)

// extractPDF reads the text layer of a PDF, a section per page (split further when long), so that a citation
// names the page. A PDF whose pages hold no text, a scan, is ErrNoText: it would need optical character
// recognition, which the runtime does not do.
func extractPDF(ctx context.Context, body []byte, name string) (parts []part, err error) {
	defer func() { // the library reports some damage by panicking
		if r := recover(); r != nil {
			parts, err = nil, fmt.Errorf("%w: reading the PDF: %v", ErrMalformed, r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, fmt.Errorf("%w: the PDF is protected by a password", ErrUnsupported)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	title := strings.TrimSpace(r.Trailer().Key("Info").Key("Title").Text())
	if title == "" {
		title = name
	}
	pages, err := pageList(r.Trailer().Key("Root").Key("Pages"))
	if err != nil {
		return nil, err
	}
	b := newBuilder(title)
	content := int64(0)
	for i, page := range pages {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading page %d of the PDF: %w", i+1, err)
		}
		n, err := checkStreams(page.V.Key("Contents"))
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		if content += n; content > maxDocumentStream {
			return nil, fmt.Errorf("%w: the pages' content is more than %d bytes", ErrTooLarge, maxDocumentStream)
		}
		b.flush()
		b.cur = part{Section: Section{Title: title, Page: i + 1}}
		for _, para := range pageParagraphs(page.Content().Text) {
			b.para(para)
		}
	}
	return b.finish()
}

// pageList walks the page tree itself, rather than through the library's Page, so that a tree that loops or
// is too deep or too large ends with an error instead of never.
func pageList(root pdf.Value) ([]pdf.Page, error) {
	var pages []pdf.Page
	visits := 0
	var walk func(node pdf.Value, depth int) error
	walk = func(node pdf.Value, depth int) error {
		if visits++; depth > maxPageTreeDepth || visits > 4*MaxPages {
			return fmt.Errorf("%w: the PDF's page tree loops or is too deep", ErrMalformed)
		}
		switch node.Key("Type").Name() {
		case "Page":
			if len(pages) == MaxPages {
				return fmt.Errorf("%w: more than %d pages", ErrTooLarge, MaxPages)
			}
			pages = append(pages, pdf.Page{V: node})
		case "Pages":
			kids := node.Key("Kids")
			for i := range kids.Len() {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// checkStreams returns the bytes a page's content streams decompress to, and refuses a page of more than
// maxPageStream, before the library holds them as glyphs.
func checkStreams(contents pdf.Value) (int64, error) {
	streams := []pdf.Value{contents}
	if contents.Kind() == pdf.Array {
		streams = streams[:0]
		for i := range contents.Len() {
			streams = append(streams, contents.Index(i))
		}
	}
	total := int64(0)
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		rc := s.Reader()
		n, err := io.Copy(io.Discard, io.LimitReader(rc, maxPageStream-total+1))
		_ = rc.Close()
		if err != nil {
			return 0, fmt.Errorf("%w: a content stream: %w", ErrMalformed, err)
		}
		if total += n; total > maxPageStream {
			return 0, fmt.Errorf("%w: its content is more than %d bytes", ErrTooLarge, maxPageStream)
		}
	}
	return total, nil
}

// pageParagraphs rebuilds a page's lines and paragraphs from its glyphs, which a PDF places one by one: glyphs on
// one baseline make a line, a gap wider than a fraction of the font size between two of them is a space, and a
// gap between lines taller than one and a half lines, or a change of font size (a heading's), ends a paragraph.
func pageParagraphs(glyphs []pdf.Text) []string {
	type line struct {
		y, size float64
		glyphs  []pdf.Text
	}
	var lines []*line
	for _, g := range glyphs {
		if g.S == "" {
			continue
		}
		size := math.Max(g.FontSize, 1)
		var l *line
		if n := len(lines); n > 0 && math.Abs(lines[n-1].y-g.Y) < size/2 {
			l = lines[n-1]
		} else {
			l = &line{y: g.Y, size: size}
			lines = append(lines, l)
		}
		l.glyphs = append(l.glyphs, g)
	}
	// Top to bottom, as read; the content stream's order when the positions tie.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].y > lines[j].y+lines[j].size/2 })
	var paras []string
	var para []string
	for i, l := range lines {
		sort.SliceStable(l.glyphs, func(a, b int) bool { return l.glyphs[a].X < l.glyphs[b].X })
		var sb strings.Builder
		end := math.Inf(-1)
		for _, g := range l.glyphs {
			if g.X-end > l.size*0.15 && sb.Len() > 0 && !strings.HasSuffix(sb.String(), " ") && g.S != " " {
				sb.WriteByte(' ')
			}
			sb.WriteString(g.S)
			end = g.X + g.W
		}
		if i > 0 && len(para) > 0 && (lines[i-1].y-l.y > 1.6*math.Max(l.size, lines[i-1].size)*1.2 ||
			math.Abs(l.size-lines[i-1].size) > 0.2*l.size) { // a wide gap, or a heading's size
			paras = append(paras, strings.Join(para, " "))
			para = nil
		}
		if text := clean(sb.String()); text != "" {
			para = append(para, text)
		}
	}
	if len(para) > 0 {
		paras = append(paras, strings.Join(para, " "))
	}
	return paras
}
