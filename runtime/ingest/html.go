package ingest

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// maxElements bounds the elements of a page readability looks at: a page of more is read without it.
const maxElements = 50000

// extractHTML reads a web page's main content, found by readability (Mozilla's algorithm, which drops
// navigation, headers, footers, sidebars and banners), split at its h1 to h3 headings. A page readability finds
// no article in (a short page, a page of lists) is read whole, less the parts that are never content.
func extractHTML(body []byte, cs string, pageURL *url.URL) ([]part, error) {
	doc, err := parseHTML(body, cs)
	if err != nil {
		return nil, err
	}
	title := documentTitle(doc)
	stripChrome(doc)
	parser := readability.NewParser()
	root := doc
	// Readability works on a copy of the page: only a page of a bounded size is copied, a larger one is read
	// whole, less its chrome.
	if elements(doc) <= maxElements {
		if article, err := parser.ParseDocument(doc, pageURL); err == nil && article.Node != nil && textLength(article.Node) > 0 {
			root = article.Node
		}
	}
	b := newBuilder(title)
	w := htmlWalker{b: b}
	w.walk(root)
	w.endPara()
	return b.finish()
}

// elements counts the elements of a page.
func elements(doc *html.Node) int {
	n := 0
	for d := range doc.Descendants() {
		if d.Type == html.ElementNode {
			n++
		}
	}
	return n
}

// maxPageNodes bounds the elements and texts of a page: a parsed page costs a few hundred bytes of memory a
// node, and the largest real pages (a long encyclopaedia article) hold well under this.
const maxPageNodes = 200_000

// parseHTML parses a page in the charset its media type or its meta element names, UTF-8 by default, once a
// pass of the tokenizer, which holds no tree, has counted its nodes within maxPageNodes.
func parseHTML(body []byte, cs string) (*html.Node, error) {
	z := html.NewTokenizer(bytes.NewReader(body))
	for nodes := 0; ; {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt == html.StartTagToken || tt == html.TextToken {
			if nodes++; nodes > maxPageNodes {
				return nil, fmt.Errorf("%w: a page of more than %d elements and texts", ErrTooLarge, maxPageNodes)
			}
		}
	}
	contentType := "text/html"
	if cs != "" {
		contentType += "; charset=" + cs
	}
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return doc, nil
}

// documentTitle is the page's first h1 when its title element repeats it (the title element often adds the
// site's name), else the title element's text.
func documentTitle(doc *html.Node) string {
	var title, h1 string
	for n := range doc.Descendants() {
		switch {
		case n.Type != html.ElementNode:
		case n.DataAtom == atom.Title && title == "":
			title = textOf(n)
		case n.DataAtom == atom.H1 && h1 == "":
			h1 = textOf(n)
		}
	}
	if title == "" || (h1 != "" && strings.Contains(strings.ToLower(title), strings.ToLower(h1))) {
		return h1
	}
	return title
}

// stripChrome removes from a page the elements that are never its content, before readability looks for the
// main content (which a short page may not have): navigation, the page's header and footer (not an article's),
// sidebars, forms, dialogs, and what says it is a cookie notice.
func stripChrome(doc *html.Node) {
	var drop []*html.Node
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Nav, atom.Aside, atom.Form, atom.Dialog:
			drop = append(drop, n)
			continue
		case atom.Header, atom.Footer:
			if !inside(n, atom.Article, atom.Main) {
				drop = append(drop, n)
				continue
			}
		}
		switch attr(n, "role") {
		case "navigation", "banner", "contentinfo", "dialog", "alertdialog", "search":
			drop = append(drop, n)
			continue
		}
		marks := strings.ToLower(attr(n, "id") + " " + attr(n, "class"))
		if strings.Contains(marks, "cookie") || strings.Contains(marks, "consent") || strings.Contains(marks, "gdpr") {
			drop = append(drop, n)
		}
	}
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
}

// inside tells whether n is within an element of one of the kinds.
func inside(n *html.Node, kinds ...atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && slices.Contains(kinds, p.DataAtom) {
			return true
		}
	}
	return false
}

// htmlWalker turns an element tree into the builder's headings and paragraphs.
type htmlWalker struct {
	b    *builder
	line strings.Builder
	pre  int // depth in pre elements, where white space is kept
}

func (w *htmlWalker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.line.WriteString(n.Data)
		} else {
			w.inline(n.Data)
		}
		return
	case html.ElementNode:
	case html.DocumentNode:
		for c := range n.ChildNodes() {
			w.walk(c)
		}
		return
	default:
		return
	}
	if hidden(n) {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3:
		w.endPara()
		w.b.heading(int(n.Data[1]-'0'), textOf(n), anchorOf(n))
		return
	case atom.Br:
		w.line.WriteByte('\n')
		return
	case atom.Pre:
		w.endPara()
		w.pre++
		for c := range n.ChildNodes() {
			w.walk(c)
		}
		w.pre--
		w.endPara()
		return
	case atom.Tr: // a line of its table's paragraph
		var cells []string
		for c := range n.ChildNodes() {
			if c.Type == html.ElementNode && (c.DataAtom == atom.Td || c.DataAtom == atom.Th) {
				if t := textOf(c); t != "" {
					cells = append(cells, t)
				}
			}
		}
		if s := w.line.String(); s != "" && !strings.HasSuffix(s, "\n") {
			w.line.WriteByte('\n')
		}
		w.line.WriteString(strings.Join(cells, " | ") + "\n")
		return
	case atom.Li:
		if s := w.line.String(); s != "" && !strings.HasSuffix(s, "\n") {
			w.line.WriteByte('\n')
		}
		w.line.WriteString("- ")
		for c := range n.ChildNodes() {
			w.walk(c)
		}
		w.line.WriteByte('\n')
		return
	}
	block := isBlock(n.DataAtom)
	if block {
		w.endPara()
	}
	for c := range n.ChildNodes() {
		w.walk(c)
	}
	if block {
		w.endPara()
	}
}

// inline adds running text, its white space collapsed.
func (w *htmlWalker) inline(s string) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		if s != "" && w.line.Len() > 0 {
			w.space()
		}
		return
	}
	if startsWithSpace(s) {
		w.space()
	}
	w.line.WriteString(strings.Join(fields, " "))
	if endsWithSpace(s) {
		w.space()
	}
}

func (w *htmlWalker) space() {
	if s := w.line.String(); s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") && s != "- " {
		w.line.WriteByte(' ')
	}
}

// endPara ends the running paragraph; a list item is one line of a paragraph of lines, so that a list stays
// together.
func (w *htmlWalker) endPara() {
	text := strings.TrimSpace(w.line.String())
	w.line.Reset()
	if text == "" {
		return
	}
	if w.pre == 0 {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		text = strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" || l == "-" }), "\n")
	}
	w.b.para(text)
}

// isBlock tells whether an element starts a new paragraph.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Blockquote, atom.Ul, atom.Ol, atom.Dl,
		atom.Dt, atom.Dd, atom.Table, atom.Figure, atom.Figcaption, atom.H4, atom.H5, atom.H6, atom.Details,
		atom.Summary, atom.Address, atom.Hr, atom.Header, atom.Footer, atom.Nav, atom.Aside, atom.Body:
		return true
	}
	return false
}

// hidden tells whether an element is never shown as text: scripts, styles, and what is marked hidden.
func hidden(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe, atom.Object, atom.Button,
		atom.Select, atom.Head, atom.Canvas:
		return true
	}
	if _, ok := attrOK(n, "hidden"); ok {
		return true
	}
	if attr(n, "aria-hidden") == "true" {
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// anchorOf is a heading's fragment id: its own, else that of a named anchor inside it, else that of the section
// it opens.
func anchorOf(h *html.Node) string {
	if id := attr(h, "id"); id != "" {
		return id
	}
	for n := range h.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.A {
			if id := attr(n, "id"); id != "" {
				return id
			}
			if name := attr(n, "name"); name != "" {
				return name
			}
		}
	}
	if p := h.Parent; p != nil && p.DataAtom == atom.Section && firstElement(p) == h {
		return attr(p, "id")
	}
	return ""
}

func firstElement(n *html.Node) *html.Node {
	for c := range n.ChildNodes() {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// textOf is the visible text of an element, its white space collapsed.
func textOf(n *html.Node) string {
	var sb strings.Builder
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			sb.WriteString(n.Data)
		case n.Type == html.ElementNode && hidden(n):
		default:
			if n.Type == html.ElementNode && (n.DataAtom == atom.Br || isBlock(n.DataAtom)) {
				sb.WriteByte(' ')
			}
			for c := range n.ChildNodes() {
				visit(c)
			}
		}
	}
	visit(n)
	return clean(sb.String())
}

// textLength is how many characters of text an element holds.
func textLength(n *html.Node) int {
	return utf8.RuneCountInString(textOf(n))
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func startsWithSpace(s string) bool { return s != "" && strings.TrimLeft(s, " \t\n\r\f") != s }
func endsWithSpace(s string) bool   { return s != "" && strings.TrimRight(s, " \t\n\r\f") != s }

// Links returns the addresses a web page links to, resolved against its base (the page's address, or the one
// its base element names), without fragments, each once, in the page's order: what a crawler follows. Links
// marked rel="nofollow" and those to other schemes than http and https are left out; with no base, there are
// none.
func Links(body []byte, base *url.URL) []*url.URL {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil || base == nil {
		return nil
	}
	var out []*url.URL
	seen := map[string]bool{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Base:
			if b, err := base.Parse(strings.TrimSpace(attr(n, "href"))); err == nil && attr(n, "href") != "" {
				base = b
			}
			continue
		case atom.A, atom.Area:
		default:
			continue
		}
		href := strings.TrimSpace(attr(n, "href"))
		if href == "" || slices.Contains(strings.Fields(strings.ToLower(attr(n, "rel"))), "nofollow") {
			continue
		}
		u, err := base.Parse(href)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		if key := u.String(); !seen[key] {
			seen[key] = true
			out = append(out, u)
		}
	}
	return out
}
