package chat

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/ingest"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// KnowledgeFile is one file a merchant uploads to make knowledge items of: a PDF, a Word document, a web page,
// Markdown, plain text or CSV (runtime/ingest).
type KnowledgeFile struct {
	// Name is the file's name as uploaded; its extension is a hint of its type, and it tags the items made.
	Name        string
	ContentType string
	Body        []byte
	// URL is where the merchant publishes the file, or empty: each item then links to its place in it, the
	// page of a PDF (#page=3, which browsers' PDF viewers open at) or a heading's anchor.
	URL string
}

// MaxUploadFiles is how many files one upload may hold.
const MaxUploadFiles = 20

// extractTimeout bounds the time spent reading the files of one upload, within the server's write timeout.
const extractTimeout = 30 * time.Second

// FileError refuses an upload because of one of its files: which one, and why. Err wraps one of runtime/ingest's
// errors (ErrUnsupported, ErrNoText, ErrTooLarge, ErrMalformed) or, for an item the file would make that is not a
// valid item, names the field.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.File, e.Err) }

func (e *FileError) Unwrap() error { return e.Err }

// ErrNoFiles refuses an upload without files.
var ErrNoFiles = errors.New("the upload has no files")

// ImportFiles makes knowledge items of the sections of files (runtime/ingest) and adds them to the merchant's
// knowledge base in one transaction: all of them, or none. A file uploaded again under the same name replaces
// the items its earlier upload made (edited ones too), so that a changed file does not leave its old text beside
// the new; items typed by hand or made by a source are never touched. The files together hold at most the plan's bytes of
// one import, and make at most its items of one import (ImportLimitError); a file that cannot be read, holds no
// text or makes an invalid item is FileError; past the plan's item or characters ceiling, ImportCeilingError.
// Each item is titled with its section's title (with its page for a PDF), tagged with its file's name, and
// linked to its place in the file when the file has a URL. It returns the items with their IDs and times.
func (s *Service) ImportFiles(ctx context.Context, m *tenant.Bundle, files []KnowledgeFile) ([]store.Knowledge, error) {
	items, err := filesItems(ctx, files, m.Plan.ImportItemsLimit(), m.Plan.ImportBytesLimit())
	if err != nil {
		return nil, fmt.Errorf("reading the files uploaded by merchant %s: %w", m.MerchantID, err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	if err := s.addImported(ctx, m, items, names); err != nil {
		return nil, err
	}
	return items, nil
}

// filesItems checks the upload's bounds and returns the items its files make, valid, in the files' order.
func filesItems(ctx context.Context, files []KnowledgeFile, maxItems, maxBytes int) ([]store.Knowledge, error) {
	switch {
	case len(files) == 0:
		return nil, ErrNoFiles
	case len(files) > MaxUploadFiles:
		return nil, &ImportLimitError{Bound: ImportBoundFiles, Limit: MaxUploadFiles}
	}
	size := 0
	for _, f := range files {
		if size += len(f.Body); size > maxBytes {
			return nil, &ImportLimitError{Bound: ImportBoundBytes, Limit: maxBytes}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, extractTimeout)
	defer cancel()
	var items []store.Knowledge
	for _, f := range files {
		made, err := fileItems(ctx, f)
		if err != nil {
			return nil, &FileError{File: f.Name, Err: err}
		}
		if items = append(items, made...); len(items) > maxItems {
			return nil, &ImportLimitError{Bound: ImportBoundItems, Limit: maxItems}
		}
	}
	return items, nil
}

// fileItems reads one file into valid items.
func fileItems(ctx context.Context, f KnowledgeFile) ([]store.Knowledge, error) {
	base, err := fileURL(f.URL)
	if err != nil {
		return nil, err
	}
	sections, err := ingest.Extract(ctx, f.Name, f.ContentType, f.Body, nil)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: reading the files took longer than %s", ingest.ErrTooLarge, extractTimeout)
	}
	if err != nil {
		return nil, err
	}
	var tags []string
	if tag := fileTag(f.Name); tag != "" {
		tags = []string{tag}
	}
	items := make([]store.Knowledge, 0, len(sections))
	for _, sec := range sections {
		in := KnowledgeInput{Title: sec.Title, Content: sec.Text, Tags: tags}
		if in.Title == "" {
			in.Title = f.Name
		}
		if sec.Page > 0 {
			in.Title = pageTitle(in.Title, sec.Page)
		}
		if base != nil {
			u := *base
			switch {
			case sec.Page > 0:
				u.Fragment = "page=" + strconv.Itoa(sec.Page)
			case sec.Anchor != "":
				u.Fragment = sec.Anchor
			}
			in.URL = u.String()
		}
		k, problems := in.Validate()
		if problems != nil {
			return nil, fmt.Errorf("section %q: %s", sec.Title, problems[0].Error())
		}
		k.File = f.Name
		items = append(items, k)
	}
	return items, nil
}

// fileTag is the tag of a file's items: its name, its white space folded and without commas, which the
// dashboard's tag field separates tags with; none when the name is not a valid tag.
func fileTag(name string) string {
	tag := strings.Join(strings.Fields(strings.ReplaceAll(name, ",", " ")), " ")
	if tag == "" || !storable(tag) || utf8.RuneCountInString(tag) > MaxTagRunes {
		return ""
	}
	return tag
}

// pageTitle is a PDF section's title with its page, within MaxTitleRunes.
func pageTitle(title string, page int) string {
	suffix := " (page " + strconv.Itoa(page) + ")"
	if r := []rune(title); len(r)+utf8.RuneCountInString(suffix) > MaxTitleRunes {
		title = string(r[:MaxTitleRunes-utf8.RuneCountInString(suffix)-1]) + "…"
	}
	return title + suffix
}

// fileURL parses the address a file is published at: absolute http or https, without a fragment of its own.
func fileURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > MaxURLBytes-64 {
		return nil, fmt.Errorf("the url %q is not an absolute http or https address", raw)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}
