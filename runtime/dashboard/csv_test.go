package dashboard

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
)

// TestCSVSafeRoundTrip checks that a cell csvSafe writes never reads as a formula and that fromCSVSafe gives back
// what was written, apostrophes included, while a hand-written cell that starts with one keeps it.
func TestCSVSafeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "hello", "=1+1", "+1 for next-day delivery?", "-", "@home", "\tx", "\rx",
		"'", "''", "'hello", "'=1", "'+1 for next-day delivery?", "''=1"} {
		out := csvSafe(s)
		if formulaStart(out) {
			t.Errorf("csvSafe(%q) = %q reads as a formula", s, out)
		}
		if back := fromCSVSafe(out); back != s {
			t.Errorf("fromCSVSafe(csvSafe(%q)) = %q", s, back)
		}
	}
	for _, hand := range []string{"'hello", "it's", "'"} {
		if got := fromCSVSafe(hand); got != hand {
			t.Errorf("fromCSVSafe(%q) = %q, want it kept", hand, got)
		}
	}
}

// FuzzKnowledgeCSVRoundTrip checks that any item the dashboard accepts imports back from its CSV export as it
// was: title, content, URL, tags, listed questions and status, whatever their formula characters, quotes, commas
// and line breaks. Run it longer with `go test ./runtime/dashboard -run '^$' -fuzz FuzzKnowledgeCSVRoundTrip -fuzztime 1m`.
func FuzzKnowledgeCSVRoundTrip(f *testing.F) {
	f.Add("Opening hours", "Mon–Fri, 9 to 5.\nClosed on Sundays.", "https://shop.example/hours", "hours, faq", "When do you close?\nAre you open at Easter?", "")
	f.Add("=1+1", "\"quoted\", with commas\r\nand CRLF", "", "'tag", "'=SUM(A1)\n@home\n-1", "draft")
	f.Add("'", "''", "http://a.example", ",,", "\n\n", " published ")
	f.Fuzz(func(t *testing.T, title, content, url, tags, questions, status string) {
		k, problem := knowledgeInput{Title: title, Content: content, URL: url, Tags: splitTags(tags), Questions: splitLines(questions),
			Status: status}.check("en")
		if problem != "" {
			return
		}
		var buf bytes.Buffer
		cw := csv.NewWriter(&buf)
		_ = cw.Write(csvHeader)
		_ = cw.Write(csvRecord(k))
		cw.Flush()
		var rows []chat.ImportRow
		for row, err := range parseCSVImport(&buf) {
			if err != nil {
				t.Fatalf("the export of %+v does not read: %v", k, err)
			}
			rows = append(rows, row)
		}
		if len(rows) != 1 {
			t.Fatalf("the export of %+v reads as %d rows", k, len(rows))
		}
		back, problems := rows[0].Input.Validate()
		if problems != nil {
			t.Fatalf("the export of %+v is refused on import: %v", k, problems)
		}
		if back.Title != k.Title || back.Content != k.Content || back.URL != k.URL || !slices.Equal(back.Tags, k.Tags) ||
			!slices.Equal(back.Questions, k.Questions) || back.Draft != k.Draft {
			t.Fatalf("exported %+v, imported %+v", k, back)
		}
	})
}
