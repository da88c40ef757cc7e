package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// ImportRow is one item of an import file as a transport's parser reads it, and where it is in the file: its
// line in a CSV file, its number in a JSON array.
type ImportRow struct {
	Position int
	Input    KnowledgeInput
}

// ImportParser reads the rows of an import file in the file's order. An error ends the reading: a file it cannot
// read at all, worded by the transport, which ImportKnowledge returns as it is.
type ImportParser func(file io.Reader) iter.Seq2[ImportRow, error]

// MaxImportProblems is how many rows with problems an import lists; the others are only counted, so that a
// file of a million bad rows is answered in a few lines.
const MaxImportProblems = 50

// RowProblem is what is wrong with one row of an import.
type RowProblem struct {
	// Position is the row's ImportRow.Position.
	Position int
	Problems []FieldError
}

// ImportRowsError refuses an import whose rows have problems: the first MaxImportProblems rows with problems,
// in the file's order, and how many more rows have problems.
type ImportRowsError struct {
	Rows []RowProblem
	More int
}

func (e *ImportRowsError) Error() string {
	return fmt.Sprintf("%d rows of the import have problems", len(e.Rows)+e.More)
}

// ImportBound names the bound of a plan an import passed.
type ImportBound string

// The bounds of one import (tenant.Plan.ImportItemsLimit and ImportBytesLimit), and of one upload of files
// (MaxUploadFiles).
const (
	ImportBoundItems ImportBound = "items"
	ImportBoundBytes ImportBound = "bytes"
	ImportBoundFiles ImportBound = "files"
)

// ImportLimitError refuses an import past one of the plan's bounds of an import, found as soon as the file
// passes it: nothing past it is read.
type ImportLimitError struct {
	Bound ImportBound
	Limit int
}

func (e *ImportLimitError) Error() string {
	return fmt.Sprintf("the import has more than the plan's %d %s", e.Limit, e.Bound)
}

// ImportCeilingError refuses an import of Items items that would pass the plan's knowledgeItems or
// knowledgeCharacters: it wraps store.ErrKnowledgeLimit or store.ErrKnowledgeSizeLimit.
type ImportCeilingError struct {
	Items int
	Err   error
}

func (e *ImportCeilingError) Error() string {
	return fmt.Sprintf("importing %d items: %v", e.Items, e.Err)
}

func (e *ImportCeilingError) Unwrap() error { return e.Err }

// ErrNoImportItems refuses an import file without items.
var ErrNoImportItems = errors.New("the import has no items")

// ImportKnowledge reads an import file with parse and adds its items to the merchant's knowledge base in one
// transaction: all of them, or none. The file is refused (ImportLimitError) as soon as it passes the plan's bytes
// or items of one import, and, when rows have problems (ImportRowsError), only the first MaxImportProblems are
// kept, so that what one upload makes the runtime hold and say is bounded whatever the file. Past the plan's
// item or characters ceiling, ImportCeilingError. It returns the items with their IDs and times.
func (s *Service) ImportKnowledge(ctx context.Context, m *tenant.Bundle, file io.Reader, parse ImportParser) ([]store.Knowledge, error) {
	items, err := readImport(file, parse, m.Plan.ImportItemsLimit(), m.Plan.ImportBytesLimit())
	if err != nil {
		return nil, fmt.Errorf("reading the knowledge import of merchant %s: %w", m.MerchantID, err)
	}
	if err := s.addImported(ctx, m, items, nil); err != nil {
		return nil, err
	}
	return items, nil
}

// addImported gives the items of an import new IDs and times, in their order, and stores them as insertItems
// does, so that the ceilings count them in the place of the items of the files named replace.
func (s *Service) addImported(ctx context.Context, m *tenant.Bundle, items []store.Knowledge, replace []string) error {
	now := s.now().UTC().Truncate(time.Millisecond)
	for i := range items {
		// Each row a millisecond older than the one before: listings and exports, newest first, keep the
		// file's order, and an export imported again keeps its own.
		created := now.Add(-time.Duration(i) * time.Millisecond)
		items[i].ID, items[i].MerchantID, items[i].CreatedAt, items[i].UpdatedAt, items[i].UseCount = ids.New("kn_"), m.MerchantID, created, created, 0
	}
	if err := s.insertItems(ctx, m, items, replace); err != nil {
		return fmt.Errorf("importing %d knowledge items: %w", len(items), err)
	}
	s.knowledgeChanged(ctx, m.MerchantID)
	return nil
}

// insertItems stores new items, with their IDs and times, in one transaction within the plan's item and
// characters ceilings (ImportCeilingError), after deleting the items earlier uploads of the files named replace
// made.
func (s *Service) insertItems(ctx context.Context, m *tenant.Bundle, items []store.Knowledge, replace []string) error {
	lim := KnowledgeLimitsOf(m.Plan)
	return s.store.Write(ctx, func(tx store.Tx) error {
		if err := replaceFiles(ctx, tx, m.MerchantID, replace); err != nil {
			return err
		}
		for _, k := range items {
			claimed, err := tx.ClaimKnowledgeSlot(ctx, m.MerchantID, lim.MaxItems)
			if err != nil {
				return err
			}
			if !claimed {
				return &ImportCeilingError{Items: len(items), Err: store.ErrKnowledgeLimit}
			}
			if err := tx.InsertKnowledge(ctx, k); err != nil {
				return err
			}
		}
		if err := checkCharacters(ctx, tx, m.MerchantID, "", lim.MaxChars); err != nil {
			return &ImportCeilingError{Items: len(items), Err: err}
		}
		return nil
	})
}

// replaceFiles deletes the items of the files by these names, after the statement that serialises the merchant's
// knowledge writes, and counts them out.
func replaceFiles(ctx context.Context, tx store.Tx, merchantID string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if err := touchKnowledge(ctx, tx, merchantID, 0); err != nil {
		return err
	}
	deleted := 0
	for _, name := range names {
		n, err := tx.DeleteFileKnowledge(ctx, merchantID, name)
		if err != nil {
			return err
		}
		deleted += n
	}
	if deleted == 0 {
		return nil
	}
	return tx.TouchKnowledge(ctx, merchantID, -deleted)
}

// readImport reads at most maxBytes of file and maxItems rows with parse, and returns the rows as items to
// store once every one is valid. Once a row has a problem, the valid rows are no longer kept (nothing will be
// imported) and the reading goes on only to list and count the problems.
func readImport(file io.Reader, parse ImportParser, maxItems, maxBytes int) ([]store.Knowledge, error) {
	bounded := &boundedReader{r: file, left: maxBytes}
	var items []store.Knowledge
	var bad ImportRowsError
	rows := 0
	for row, err := range parse(bounded) {
		if bounded.over {
			return nil, &ImportLimitError{Bound: ImportBoundBytes, Limit: maxBytes}
		}
		if err != nil {
			return nil, err
		}
		if rows++; rows > maxItems {
			return nil, &ImportLimitError{Bound: ImportBoundItems, Limit: maxItems}
		}
		k, problems := row.Input.Validate()
		switch {
		case problems != nil && len(bad.Rows) < MaxImportProblems:
			bad.Rows, items = append(bad.Rows, RowProblem{Position: row.Position, Problems: problems}), nil
		case problems != nil:
			bad.More++
		case bad.Rows == nil:
			items = append(items, k)
		}
	}
	switch {
	case bounded.over: // a parser that stopped at the error without saying so
		return nil, &ImportLimitError{Bound: ImportBoundBytes, Limit: maxBytes}
	case bad.Rows != nil:
		return nil, &bad
	case len(items) == 0:
		return nil, ErrNoImportItems
	}
	return items, nil
}

// errImportTooLarge is what a parser reads past the bytes of an import.
var errImportTooLarge = errors.New("the import file is larger than the plan allows")

// boundedReader reads at most left bytes of r, and notes (over) when r holds more.
type boundedReader struct {
	r    io.Reader
	left int
	over bool
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.over {
		return 0, errImportTooLarge
	}
	if len(p) > b.left+1 {
		p = p[:b.left+1] // one byte more tells a file of exactly left bytes from a larger one
	}
	n, err := b.r.Read(p)
	if n > b.left {
		b.over = true
		return b.left, errImportTooLarge
	}
	b.left -= n
	return n, err
}
