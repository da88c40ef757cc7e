package chat_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ingest"
	"github.com/parley-dev/parley/runtime/store"
)

func fixtureFile(t *testing.T, name, url string) chat.KnowledgeFile {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return chat.KnowledgeFile{Name: name, Body: body, URL: url}
}

func TestImportFilesAnswersCitingThePlace(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Plan.KnowledgeItems = 20
	other := merchant(0)
	other.MerchantID = "globex"
	items, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{
		fixtureFile(t, "tent-care.pdf", "https://acme.example/files/tent-care.pdf"),
		fixtureFile(t, "returns.html", "https://acme.example/help/returns"),
		fixtureFile(t, "faq.csv", ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2+5+3 {
		t.Fatalf("%d items, want 10", len(items))
	}
	first, refunds := items[0], items[4]
	if first.Title != "Tent care guide (page 1)" || first.URL != "https://acme.example/files/tent-care.pdf#page=1" ||
		len(first.Tags) != 1 || first.Tags[0] != "tent-care.pdf" || first.MerchantID != m.MerchantID {
		t.Errorf("the PDF's first item: %+v", first)
	}
	if refunds.Title != "Returns and refunds › Refunds" || refunds.URL != "https://acme.example/help/returns#refunds" {
		t.Errorf("the page's refunds item: %+v", refunds)
	}
	if faq := items[7]; faq.URL != "" || faq.Title != "Wie lange dauert der Versand?" {
		t.Errorf("a CSV item without a URL: %+v", faq)
	}
	// A file's name is its items' tag when it can be one: without commas, which separate the dashboard's tags.
	odd, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{
		{Name: "prices, 2026.txt", Body: []byte("Tents from 99 euros.")},
		{Name: strings.Repeat("long", 20) + ".txt", Body: []byte("Stoves from 39 euros.")},
	})
	if err != nil || len(odd) != 2 || len(odd[0].Tags) != 1 || odd[0].Tags[0] != "prices 2026.txt" || len(odd[1].Tags) != 0 {
		t.Errorf("the tags of files with odd names: %+v %v", odd, err)
	}
	// A question only the PDF's second page answers is answered from it, citing the page.
	reply, err := f.svc.Answer(t.Context(), m, chat.Question{Message: "How should I store my tent?"})
	if err != nil {
		t.Fatal(err)
	}
	if src := reply.Message.Sources; len(src) == 0 || src[0].URL != "https://acme.example/files/tent-care.pdf#page=2" {
		t.Fatalf("the answer cites %+v, want the PDF's page 2: %q", src, reply.Message.Text)
	}
	// The items are the uploading merchant's alone.
	if theirs, err := f.store.AllKnowledge(t.Context(), other.MerchantID); err != nil || len(theirs) != 0 {
		t.Fatalf("another merchant holds %d items (%v)", len(theirs), err)
	}
}

func TestImportFilesIsAllOrNothing(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Plan.KnowledgeItems = 100
	count := func() int {
		all, err := f.store.AllKnowledge(t.Context(), m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	good := fixtureFile(t, "returns.html", "")
	tests := []struct {
		name  string
		files []chat.KnowledgeFile
		file  string
		want  error
	}{
		{"a scan", []chat.KnowledgeFile{good, fixtureFile(t, "scan.pdf", "")}, "scan.pdf", ingest.ErrNoText},
		{"an image", []chat.KnowledgeFile{good, {Name: "logo.png", ContentType: "image/png", Body: []byte("\x89PNG")}}, "logo.png", ingest.ErrUnsupported},
		{"a damaged DOCX", []chat.KnowledgeFile{good, {Name: "x.docx", Body: []byte("PK\x03\x04 broken")}}, "x.docx", ingest.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.ImportFiles(t.Context(), m, tt.files)
			var fe *chat.FileError
			if !errors.As(err, &fe) || fe.File != tt.file || !errors.Is(err, tt.want) {
				t.Fatalf("ImportFiles: %v, want a FileError of %s wrapping %v", err, tt.file, tt.want)
			}
			if n := count(); n != 0 {
				t.Fatalf("%d items stored from a refused upload", n)
			}
		})
	}
	var fe *chat.FileError
	if _, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{fixtureFile(t, "care.txt", "ftp://acme.example/care.txt")}); !errors.As(err, &fe) || !strings.Contains(err.Error(), "not an absolute http") {
		t.Fatalf("a file URL of another scheme: %v", err)
	}
}

func TestImportFilesBounds(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Plan.KnowledgeItems = 6
	m.Plan.ImportItems = 4
	m.Plan.ImportBytes = 4000
	html := fixtureFile(t, "returns.html", "") // 2,925 bytes, 5 items
	var limit *chat.ImportLimitError
	if _, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{html}); !errors.As(err, &limit) || limit.Bound != chat.ImportBoundItems || limit.Limit != 4 {
		t.Errorf("past the items of an import: %v", err)
	}
	if _, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{html, html}); !errors.As(err, &limit) || limit.Bound != chat.ImportBoundBytes {
		t.Errorf("past the bytes of an import: %v", err)
	}
	many := make([]chat.KnowledgeFile, chat.MaxUploadFiles+1)
	if _, err := f.svc.ImportFiles(t.Context(), m, many); !errors.As(err, &limit) || limit.Bound != chat.ImportBoundFiles {
		t.Errorf("past the files of an upload: %v", err)
	}
	if _, err := f.svc.ImportFiles(t.Context(), m, nil); !errors.Is(err, chat.ErrNoFiles) {
		t.Errorf("no files: %v", err)
	}
	// Past the plan's ceiling of items: nothing is stored.
	m.Plan.ImportItems = 0
	if _, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{fixtureFile(t, "faq.csv", ""), fixtureFile(t, "stores.csv", "")}); err != nil {
		t.Fatal(err)
	}
	var ceiling *chat.ImportCeilingError
	if _, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{html}); !errors.As(err, &ceiling) || !errors.Is(err, store.ErrKnowledgeLimit) {
		t.Errorf("past the ceiling: %v", err)
	}
	// A file uploaded again takes its earlier items' place: within the ceiling however near it is.
	if _, err := f.svc.ImportFiles(t.Context(), m, []chat.KnowledgeFile{fixtureFile(t, "faq.csv", "")}); err != nil {
		t.Errorf("faq.csv again, at the ceiling: %v", err)
	}
	if all, _ := f.store.AllKnowledge(t.Context(), m.MerchantID); len(all) != 5 {
		t.Errorf("%d items, want the 5 of the first upload", len(all))
	}
}
