// Command gen writes the PDF and DOCX fixtures of runtime/ingest's tests: go generate ./runtime/ingest.
// The files are written by hand, byte by byte, so that what they hold is plain in this program.
package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

func main() {
	for name, body := range map[string][]byte{
		"tent-care.pdf": textPDF("Tent care guide", [][]string{
			{"#Tent care guide", "Look after your tent and it lasts for a decade of trips.", "", "Clean it with lukewarm water and a sponge. Never use", "detergent or a washing machine: both strip the coating."},
			{"#Storing your tent", "Store the tent dry and loosely packed, in a cool place", "away from sunlight. Packed wet, it grows mould within two days."},
			{},
		}),
		"scan.pdf":      scannedPDF(),
		"warranty.docx": docx(),
	} {
		if err := os.WriteFile(name, body, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// textPDF is a PDF with a page per element of pages, each line of Helvetica text; a line starting with # is set
// large, an empty line is a paragraph break.
func textPDF(title string, pages [][]string) []byte {
	var objs []string
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	catalog := add("")
	pagesObj := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, lines := range pages {
		var c strings.Builder
		c.WriteString("BT\n72 740 Td\n")
		for _, l := range lines {
			switch {
			case l == "":
				c.WriteString("0 -14 Td\n")
			case strings.HasPrefix(l, "#"):
				fmt.Fprintf(&c, "/F1 20 Tf\n(%s) Tj\n0 -30 Td\n", l[1:])
			default:
				fmt.Fprintf(&c, "/F1 11 Tf\n(%s) Tj\n0 -14 Td\n", l)
			}
		}
		c.WriteString("ET\n")
		content := add(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", c.Len(), c.String()))
		kids = append(kids, fmt.Sprintf("%d 0 R", add(fmt.Sprintf(
			"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pagesObj, font, content))))
	}
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	info := add(fmt.Sprintf("<< /Title (%s) /Producer (parley testdata) >>", title))
	return writePDF(objs, catalog, info)
}

// scannedPDF is a page holding only an image, as a scanner makes: no text layer.
func scannedPDF() []byte {
	pixels := strings.Repeat("\x80", 16*16)
	draw := "q 540 0 0 720 36 36 cm /Im1 Do Q\n"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width 16 /Height 16 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d >>\nstream\n%s\nendstream", len(pixels), pixels),
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(draw), draw),
	}
	return writePDF(objs, 1, 0)
}

func writePDF(objs []string, root, info int) []byte {
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
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R", len(objs)+1, root)
	if info > 0 {
		fmt.Fprintf(&b, " /Info %d 0 R", info)
	}
	fmt.Fprintf(&b, " >>\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// docx is a Word document with a title, headings of two levels under a localised style name, a list and a
// table, as Word writes them.
func docx() []byte {
	p := func(style, text string) string {
		ppr := ""
		if style != "" {
			ppr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
		}
		return `<w:p>` + ppr + `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r></w:p>`
	}
	body := p("Title", "Warranty conditions") +
		p("", "Every Acme product carries a warranty against defects in materials and workmanship.") +
		p("berschrift1", "What the warranty covers") +
		`<w:p><w:r><w:t>Seams, zips, poles and buckles that fail in normal use, for </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>two years</w:t></w:r><w:r><w:t xml:space="preserve"> from delivery.</w:t></w:r></w:p>` +
		p("ListParagraph", "Tents and shelters") +
		p("ListParagraph", "Backpacks") +
		p("berschrift2", "Stoves") +
		`<w:p><w:r><w:t>Stoves are covered for three years.</w:t><w:br/><w:t>Keep the receipt.</w:t></w:r></w:p>` +
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Part</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Years</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>Burner</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>3</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
		p("berschrift1", "What it does not cover") +
		p("", "Wear and tear, damage from misuse, and repairs made by others than Acme.")
	files := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/styles.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style><w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style><w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style><w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style></w:styles>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + body + `</w:body></w:document>`},
	}
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, f := range files {
		w, err := z.Create(f.name)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			log.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}
