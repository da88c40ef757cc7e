package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzExtract checks that no document, however damaged, panics Extract or makes sections past their bounds,
// and that every failure is one of the typed errors: go test ./runtime/ingest -run '^$' -fuzz FuzzExtract.
func FuzzExtract(f *testing.F) {
	names := []string{"f.html", "f.md", "f.txt", "f.csv", "f.pdf", "f.docx"}
	fixtures, err := filepath.Glob("testdata/*.*")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range fixtures {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for i, n := range names {
			if filepath.Ext(n) == filepath.Ext(path) {
				f.Add(uint8(i), body)
			}
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		name := names[int(kind)%len(names)]
		sections, err := Extract(t.Context(), name, "", body, nil)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrNoText) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Extract(%s): an error of no kind: %v", name, err)
			}
			return
		}
		for _, s := range sections {
			if n := utf8.RuneCountInString(s.Text); n == 0 || n > MaxSectionRunes || !utf8.ValidString(s.Text) || !utf8.ValidString(s.Title) {
				t.Fatalf("Extract(%s): a section of %d characters, valid UTF-8 %v", name, n, utf8.ValidString(s.Text))
			}
		}
	})
}
