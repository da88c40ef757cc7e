package ingest

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"sigs.k8s.io/yaml"
)

// extractMarkdown reads a CommonMark document (with GitHub's tables), split at its level 1 to 3 headings, each
// with the id GitHub and most static site generators give it. A YAML front matter's title is the document's.
func extractMarkdown(doc, name string) ([]part, error) {
	title, doc := frontMatter(doc, name)
	src := []byte(doc)
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	root := md.Parser().Parse(text.NewReader(src))
	b := newBuilder(title)
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		markdownBlock(b, n, src)
	}
	return b.finish()
}

// markdownBlock adds one block of a Markdown document to b.
func markdownBlock(b *builder, n ast.Node, src []byte) {
	switch n := n.(type) {
	case *ast.Heading:
		if n.Level > maxHeadingLevel {
			b.para(inlineText(n, src))
			return
		}
		anchor := ""
		if id, ok := n.AttributeString("id"); ok {
			if s, ok := id.([]byte); ok {
				anchor = string(s)
			}
		}
		b.heading(n.Level, inlineText(n, src), anchor)
	case *ast.List:
		b.para(listText(n, src, ""))
	case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
		var sb strings.Builder
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			sb.Write(seg.Value(src))
		}
		if _, isHTML := n.(*ast.HTMLBlock); isHTML {
			b.para(htmlFragmentText(sb.String()))
			return
		}
		b.para(strings.TrimRight(sb.String(), "\n"))
	case *ast.Blockquote:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			markdownBlock(b, c, src)
		}
	case *east.Table:
		var rows []string
		for r := n.FirstChild(); r != nil; r = r.NextSibling() {
			var cells []string
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				if t := inlineText(c, src); t != "" {
					cells = append(cells, t)
				}
			}
			rows = append(rows, strings.Join(cells, " | "))
		}
		b.para(strings.Join(rows, "\n"))
	case *ast.ThematicBreak, *ast.LinkReferenceDefinition:
	default:
		b.para(inlineText(n, src))
	}
}

// listText is a list as lines "- item", nested lists indented.
func listText(l *ast.List, src []byte, indent string) string {
	var lines []string
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		var own []string
		var nested []string
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			if sub, ok := c.(*ast.List); ok {
				nested = append(nested, listText(sub, src, indent+"  "))
				continue
			}
			if t := inlineText(c, src); t != "" {
				own = append(own, t)
			}
		}
		lines = append(lines, indent+"- "+strings.Join(own, " "))
		lines = append(lines, nested...)
	}
	return strings.Join(lines, "\n")
}

// inlineText is the text of a block's inline content: link texts, code spans and image descriptions included,
// soft line breaks as spaces.
func inlineText(n ast.Node, src []byte) string {
	var sb strings.Builder
	var visit func(ast.Node)
	visit = func(n ast.Node) {
		switch n := n.(type) {
		case *ast.Text:
			sb.Write(n.Value(src))
			switch {
			case n.HardLineBreak():
				sb.WriteByte('\n')
			case n.SoftLineBreak():
				sb.WriteByte(' ')
			}
			return
		case *ast.String:
			sb.Write(n.Value)
			return
		case *ast.AutoLink:
			sb.Write(n.Label(src))
			return
		case *ast.RawHTML:
			return
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			visit(c)
		}
	}
	visit(n)
	lines := strings.Split(sb.String(), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// htmlFragmentText is the visible text of a block of raw HTML in a Markdown document.
func htmlFragmentText(fragment string) string {
	doc, err := parseHTML([]byte(fragment), "utf-8")
	if err != nil {
		return ""
	}
	return textOf(doc)
}

// frontMatter splits a YAML front matter (between "---" lines at the top, as Jekyll, Hugo and Docusaurus write
// it) from a Markdown document, and returns its title, else name, and the rest of the document.
func frontMatter(doc, name string) (string, string) {
	rest, ok := strings.CutPrefix(doc, "---\n")
	if !ok {
		return name, doc
	}
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		if !strings.HasSuffix(rest, "\n---") {
			return name, doc
		}
		end = len(rest) - len("\n---")
	}
	var meta struct {
		Title string `json:"title"`
	}
	if err := yaml.Unmarshal([]byte(rest[:end]), &meta); err != nil {
		return name, doc // not front matter after all: a thematic break
	}
	body := ""
	if end+len("\n---\n") <= len(rest) {
		body = rest[end+len("\n---\n"):]
	}
	if meta.Title != "" {
		name = meta.Title
	}
	return name, body
}
