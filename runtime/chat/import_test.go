package chat_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// lines is an import format of the tests: one item a line, its title and content separated by "|". It counts
// the rows it read into read.
func lines(read *int) chat.ImportParser {
	return func(file io.Reader) iter.Seq2[chat.ImportRow, error] {
		return func(yield func(chat.ImportRow, error) bool) {
			sc := bufio.NewScanner(file)
			for n := 1; sc.Scan(); n++ {
				*read++
				title, content, _ := strings.Cut(sc.Text(), "|")
				if !yield(chat.ImportRow{Position: n, Input: chat.KnowledgeInput{Title: title, Content: content}}, nil) {
					return
				}
			}
			if err := sc.Err(); err != nil {
				yield(chat.ImportRow{}, fmt.Errorf("reading line: %w", err))
			}
		}
	}
}

// file is an import of n items of the lines format, or of n rows without a title with bad.
func file(n int, bad bool) io.Reader {
	var b strings.Builder
	for i := range n {
		if bad {
			b.WriteString("|\n")
		} else {
			fmt.Fprintf(&b, "Item %d|Content\n", i)
		}
	}
	return strings.NewReader(b.String())
}

// An import is all or nothing: one past the plan's ceiling and none of the items is kept.
func TestImportKnowledgeIsAllOrNothing(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Plan.KnowledgeItems = 3
	if _, err := f.svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: "Returns", Content: "Within 60 days."}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		all, err := f.store.AllKnowledge(t.Context(), m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	var read int
	_, err := f.svc.ImportKnowledge(t.Context(), m, file(3, false), lines(&read))
	if ce := (*chat.ImportCeilingError)(nil); !errors.Is(err, store.ErrKnowledgeLimit) || !errors.As(err, &ce) || ce.Items != 3 {
		t.Fatalf("importing past the ceiling: %v", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after a refused import: %d items, want 1", n)
	}
	got, err := f.svc.ImportKnowledge(t.Context(), m, file(2, false), lines(&read))
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 3 || len(got) != 2 || got[0].ID == "" || got[0].ID == got[1].ID || got[0].MerchantID != m.MerchantID {
		t.Errorf("after an import: %d items, returned %+v", n, got)
	}
	// The imported items answer at once.
	reply, err := f.svc.Answer(t.Context(), m, chat.Question{Message: "Tell me about item 1"})
	if err != nil || len(reply.Message.Sources) == 0 {
		t.Errorf("the imported items do not answer: %+v %v", reply, err)
	}
}

// Imported items list, and export, in the file's order: an export imported again keeps its order.
func TestImportKeepsTheFilesOrder(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	var read int
	if _, err := f.svc.ImportKnowledge(t.Context(), m, file(3, false), lines(&read)); err != nil {
		t.Fatal(err)
	}
	all, err := f.store.AllKnowledge(t.Context(), m.MerchantID)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, k := range all {
		titles = append(titles, k.Title)
	}
	if got := strings.Join(titles, ", "); got != "Item 0, Item 1, Item 2" {
		t.Errorf("listed as %s, want the file's order", got)
	}
}

// A file of many bad rows is answered with the first MaxImportProblems of them and how many more there are, not
// with a problem for every row.
func TestImportProblemsAreBounded(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Plan.ImportItems = 10000
	var read int
	// A good row first, then bad ones, then good ones: none is imported, every bad one is counted.
	in := io.MultiReader(strings.NewReader("Good|Row\n"), file(9000, true), file(10, false))
	_, err := f.svc.ImportKnowledge(t.Context(), m, in, lines(&read))
	var re *chat.ImportRowsError
	if !errors.As(err, &re) {
		t.Fatalf("an import of bad rows: %v", err)
	}
	if len(re.Rows) != chat.MaxImportProblems || re.More != 9000-chat.MaxImportProblems {
		t.Errorf("%d rows listed and %d more, want %d and %d", len(re.Rows), re.More, chat.MaxImportProblems, 9000-chat.MaxImportProblems)
	}
	if first := re.Rows[0]; first.Position != 2 || first.Problems[0].Field != chat.FieldTitle || first.Problems[0].Problem != chat.ProblemMissing {
		t.Errorf("the first problem: %+v", first)
	}
	if last := re.Rows[len(re.Rows)-1]; last.Position != chat.MaxImportProblems+1 {
		t.Errorf("the last listed problem is of row %d, want %d", last.Position, chat.MaxImportProblems+1)
	}
	if all, _ := f.store.AllKnowledge(t.Context(), m.MerchantID); len(all) != 0 {
		t.Errorf("%d items kept of an import with problems", len(all))
	}
}

// An import is refused as soon as it passes the plan's bytes or items of one import, its defaults when the plan
// sets none, without reading the rest of the file.
func TestImportBounds(t *testing.T) {
	f := newFixture(t)
	row := len("Item 0|Content\n")
	for _, tc := range []struct {
		name               string
		items, bytes       int32
		file               io.Reader
		wantBound          chat.ImportBound
		wantLimit, maxRead int
	}{
		{"items", 10, 0, file(1_000_000, false), chat.ImportBoundItems, 10, 11},
		{"bad items", 10, 0, file(1_000_000, true), chat.ImportBoundItems, 10, 11},
		{"default items", 0, 0, file(1_000_000, true), chat.ImportBoundItems, 1000, 1001},
		{"bytes", 0, 10 * int32(row), file(11, false), chat.ImportBoundBytes, 10 * row, 11},
		{"default bytes", 10000, 0, strings.NewReader(strings.Repeat("A|"+strings.Repeat("a", 1022)+"\n", 5000)), chat.ImportBoundBytes, 4 << 20, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := merchant(0)
			m.Plan.KnowledgeItems, m.Plan.ImportItems, m.Plan.ImportBytes = 0, tc.items, tc.bytes
			var read int
			_, err := f.svc.ImportKnowledge(t.Context(), m, tc.file, lines(&read))
			var le *chat.ImportLimitError
			if !errors.As(err, &le) || le.Bound != tc.wantBound || le.Limit != tc.wantLimit {
				t.Fatalf("got %v, want the %d %s bound", err, tc.wantLimit, tc.wantBound)
			}
			if read > tc.maxRead {
				t.Errorf("%d rows read, want at most %d", read, tc.maxRead)
			}
		})
	}
	// A file of exactly the plan's bytes and items is imported.
	m := merchant(0)
	m.Plan.ImportItems, m.Plan.ImportBytes = 10, 10*int32(row)
	var read int
	if got, err := f.svc.ImportKnowledge(t.Context(), m, file(10, false), lines(&read)); err != nil || len(got) != 10 {
		t.Errorf("an import of exactly the bounds: %d items, %v", len(got), err)
	}
}

// An import without items, or one its parser cannot read, is refused with what is wrong.
func TestImportRefusesUnreadableFiles(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	var read int
	if _, err := f.svc.ImportKnowledge(t.Context(), m, strings.NewReader(""), lines(&read)); !errors.Is(err, chat.ErrNoImportItems) {
		t.Errorf("an empty import: %v", err)
	}
	broken := errors.New("not this format")
	failing := func(io.Reader) iter.Seq2[chat.ImportRow, error] {
		return func(yield func(chat.ImportRow, error) bool) { yield(chat.ImportRow{}, broken) }
	}
	if _, err := f.svc.ImportKnowledge(t.Context(), m, strings.NewReader("x"), failing); !errors.Is(err, broken) {
		t.Errorf("an unreadable import: %v", err)
	}
}
