package ingest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// part is a section as a reader finds it, before normalize sizes it: heading is the section's own heading, which
// stays in the text when a tiny section is merged into the one before it.
// A standalone part, such as a row of a CSV file, is never merged.
type part struct {
	Section
	heading    string
	standalone bool
}

// maxHeadingLevel is the deepest heading that starts a section; deeper ones stay lines of their section's text.
const maxHeadingLevel = 3

// builder collects a document's headings and paragraphs, in order, into parts.
type builder struct {
	title string   // the document's title
	path  []string // the current heading at each level, 1 to maxHeadingLevel
	cur   part
	paras []string
	parts []part
	size  int // bytes of text collected, bounded by MaxTextBytes
	over  bool
}

func newBuilder(title string) *builder {
	b := &builder{title: clean(title), path: make([]string, maxHeadingLevel)}
	b.cur.Title = b.title
	return b
}

// heading starts a section at a heading of level 1 to maxHeadingLevel; anchor is its fragment id.
func (b *builder) heading(level int, text, anchor string) {
	text = clean(text)
	if text == "" {
		return
	}
	b.flush()
	b.path[level-1] = text
	clear(b.path[level:])
	var names []string
	if b.path[0] == "" && b.title != "" && !strings.EqualFold(b.title, text) {
		names = append(names, b.title)
	}
	for _, p := range b.path[:level] {
		if p != "" {
			names = append(names, p)
		}
	}
	b.cur = part{Section: Section{Title: strings.Join(names, " › "), Anchor: anchor, Page: b.cur.Page}, heading: text}
}

// para adds a paragraph to the current section; empty ones are dropped.
func (b *builder) para(text string) {
	if text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD")); text == "" {
		return
	}
	if b.size += len(text); b.size > MaxTextBytes {
		b.over = true
		return
	}
	b.paras = append(b.paras, text)
}

func (b *builder) flush() {
	if len(b.paras) > 0 {
		b.cur.Text = strings.Join(b.paras, "\n\n")
		b.parts = append(b.parts, b.cur)
	}
	b.paras = b.paras[:0]
}

// finish returns the parts, or ErrTooLarge when the document held more than MaxTextBytes of text.
func (b *builder) finish() ([]part, error) {
	b.flush()
	if b.over {
		return nil, fmt.Errorf("%w: more than %d bytes of text", ErrTooLarge, MaxTextBytes)
	}
	return b.parts, nil
}

// normalize sizes the parts into sections: merges a part shorter than minSectionRunes with its subsections that
// follow while they fit in MaxSectionRunes, and splits a part longer than MaxSectionRunes.
func normalize(parts []part) []Section {
	var out []Section
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		for i+1 < len(parts) && utf8.RuneCountInString(p.Text) < minSectionRunes && mergeable(p, parts[i+1]) {
			next := parts[i+1]
			text := p.Text + "\n\n" + next.Text
			if next.heading != "" {
				text = p.Text + "\n\n" + next.heading + "\n\n" + next.Text
			}
			if utf8.RuneCountInString(text) > MaxSectionRunes {
				break
			}
			p.Text = text
			i++
		}
		for _, text := range split(p.Text, MaxSectionRunes) {
			out = append(out, Section{Title: truncate(p.Title, maxTitleRunes), Anchor: p.Anchor, Text: text, Page: p.Page})
		}
	}
	return out
}

// mergeable tells whether next can join the tiny part p: it is on the same page and is a subsection of p, whose
// title still says what both are about; a row of a table is never merged.
func mergeable(p, next part) bool {
	return !p.standalone && !next.standalone && next.Page == p.Page &&
		(next.Title == p.Title || strings.HasPrefix(next.Title, p.Title+" › "))
}

// maxTitleRunes is the longest title of a section: the knowledge item's.
const maxTitleRunes = 200

// split cuts text into balanced parts of at most max runes: at paragraph breaks where it can, else at sentence
// ends, else at spaces, else anywhere.
func split(text string, max int) []string {
	n := utf8.RuneCountInString(text)
	if n <= max {
		return []string{text}
	}
	target := n / ((n + max - 1) / max) // balanced, so that the last part is not a scrap
	var out []string
	var cur strings.Builder
	curRunes := 0
	emit := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
		curRunes = 0
	}
	for _, piece := range pieces(text, max) {
		r := utf8.RuneCountInString(piece)
		if curRunes > 0 && (curRunes+r > max || curRunes >= target) {
			emit()
		}
		cur.WriteString(piece)
		curRunes += r
	}
	emit()
	return out
}

// pieces cuts text into pieces of at most max runes that keep their separators, so that joining them gives the
// text: paragraphs, then sentences of a paragraph too long, then words of a sentence too long.
func pieces(text string, max int) []string {
	var out []string
	for _, para := range cutAfter(text, func(s string, i int) bool { return strings.HasPrefix(s[i:], "\n\n") }, 2) {
		if utf8.RuneCountInString(para) <= max {
			out = append(out, para)
			continue
		}
		for _, sentence := range cutAfter(para, sentenceEnd, 1) {
			if utf8.RuneCountInString(sentence) <= max {
				out = append(out, sentence)
				continue
			}
			for _, word := range cutAfter(sentence, func(s string, i int) bool { return s[i] == ' ' || s[i] == '\n' }, 1) {
				for utf8.RuneCountInString(word) > max { // one "word" longer than a section: a run of bytes
					cut := len(string([]rune(word)[:max]))
					out, word = append(out, word[:cut]), word[cut:]
				}
				out = append(out, word)
			}
		}
	}
	return out
}

// cutAfter cuts s after each position i where at(s, i), the cut taking width bytes from i.
func cutAfter(s string, at func(s string, i int) bool, width int) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if at(s, i) {
			out = append(out, s[start:i+width])
			start = i + width
			i += width - 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// sentenceEnd tells whether s[i] is the space after the end of a sentence.
func sentenceEnd(s string, i int) bool {
	if i == 0 || (s[i] != ' ' && s[i] != '\n') {
		return false
	}
	switch s[i-1] {
	case '.', '!', '?', ':', ';':
		return true
	}
	return false
}

// clean collapses a run of white space into one space, trims it at both ends, and replaces bytes that are not
// UTF-8. It writes the text once, without a slice of its words: a document of short words is cleaned a paragraph
// at a time, megabytes of them.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// truncate shortens s to max runes, ending it with an ellipsis when it was longer.
func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// decodeText returns the text of a plain-text document in UTF-8: decoded from the charset its media type names,
// else as UTF-8 when it is valid UTF-8, else as Windows-1252, what spreadsheets on Windows save CSV files in.
// A byte-order mark is dropped.
func decodeText(body []byte, charset string) string {
	if charset != "" && !strings.EqualFold(charset, "utf-8") {
		if enc, err := htmlindex.Get(charset); err == nil {
			if out, err := enc.NewDecoder().Bytes(body); err == nil {
				body = out
			}
		}
	} else if !utf8.Valid(body) {
		if out, err := charmap.Windows1252.NewDecoder().Bytes(body); err == nil {
			body = out
		}
	}
	s := strings.TrimPrefix(string(body), "\ufeff")
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "\uFFFD")
}
