package ingest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// extractText reads a plain-text document: its paragraphs, under the document's name.
func extractText(doc, name string) []part {
	b := newBuilder(name)
	for _, para := range strings.Split(doc, "\n\n") {
		b.para(para)
	}
	parts, _ := b.finish()
	return parts
}

// The names a CSV file's header gives its columns of questions and answers, or of titles and texts, in the
// languages the assistant speaks; compared lower-cased.
var (
	questionColumns = []string{"question", "questions", "q", "frage", "fragen"}
	answerColumns   = []string{"answer", "answers", "a", "antwort", "antworten"}
	titleColumns    = []string{"title", "name", "heading", "subject", "titel", "überschrift", "betreff"}
	textColumns     = []string{"content", "text", "body", "description", "inhalt", "beschreibung"}
)

// maxCSVFields bounds the fields of one CSV row.
const maxCSVFields = 1000

// extractCSV reads a CSV file whose first row names its columns (comma, semicolon or tab separated): a section per
// row, with the question as the title and the answer as the text where the columns are questions and answers (or
// titles and texts), else the row's first field as the title and its fields as "column: value" lines.
func extractCSV(doc string) ([]part, error) {
	r := csv.NewReader(strings.NewReader(doc))
	r.Comma = delimiter(doc)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = false
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, ErrNoText
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading the CSV header: %w", ErrMalformed, err)
	}
	for i, h := range header {
		header[i] = clean(h)
	}
	titleCol, textCol := column(header, questionColumns), column(header, answerColumns)
	if titleCol < 0 || textCol < 0 {
		titleCol, textCol = column(header, titleColumns), column(header, textColumns)
	}
	b := newBuilder("")
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if len(row) > maxCSVFields {
			return nil, fmt.Errorf("%w: a row of more than %d fields", ErrTooLarge, maxCSVFields)
		}
		if titleCol >= 0 && textCol >= 0 {
			if titleCol < len(row) && textCol < len(row) {
				b.item(row[titleCol], row[textCol])
			}
			continue
		}
		var lines []string
		title := ""
		for i, field := range row {
			field = strings.TrimSpace(field)
			if field == "" {
				continue
			}
			if title == "" {
				title = clean(field)
			}
			if i < len(header) && header[i] != "" {
				field = header[i] + ": " + field
			}
			lines = append(lines, field)
		}
		b.item(title, strings.Join(lines, "\n"))
	}
	return b.finish()
}

// item adds a section of its own, such as a row of a table, which is never merged with the next.
func (b *builder) item(title, text string) {
	b.flush()
	b.cur = part{Section: Section{Title: clean(title)}, standalone: true}
	b.para(text)
	b.flush()
	b.cur = part{}
}

// column is the index of the first header naming one of names, or -1.
func column(header, names []string) int {
	for i, h := range header {
		for _, n := range names {
			if strings.EqualFold(h, n) {
				return i
			}
		}
	}
	return -1
}

// delimiter is the separator a CSV file's first line uses most: a comma, a semicolon (spreadsheets in locales
// with a decimal comma) or a tab.
func delimiter(doc string) rune {
	first, _, _ := strings.Cut(doc, "\n")
	best, count := ',', strings.Count(first, ",")
	for _, d := range []rune{';', '\t'} {
		if c := strings.Count(first, string(d)); c > count {
			best, count = d, c
		}
	}
	return best
}
