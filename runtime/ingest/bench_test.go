package ingest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkExtract measures the reading of each fixture: go test ./runtime/ingest -run '^$' -bench Extract -benchmem.
func BenchmarkExtract(b *testing.B) {
	for _, name := range []string{"returns.html", "camping-stoves.md", "faq.csv", "tent-care.pdf", "warranty.docx"} {
		body := readB(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Extract(b.Context(), name, "", body, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtractDensePDFPage measures the worst page a PDF may hold: a content stream as large as maxPageStream
// allows, of one-character strings, each a glyph the library keeps.
func BenchmarkExtractDensePDFPage(b *testing.B) {
	body := densePDF(maxPageStream)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Extract(b.Context(), "dense.pdf", "", body, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func readB(b *testing.B, name string) []byte {
	b.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// densePDF is a one-page PDF whose compressed content stream decompresses to about size bytes of text
// operators.
func densePDF(size int) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 10 Tf 72 740 Td\n")
	for content.Len() < size-64 {
		content.WriteString("(a) Tj (b) Tj (c) Tj 0 -1 Td\n")
	}
	content.WriteString("ET\n")
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write([]byte(content.String()))
	_ = w.Close()
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
