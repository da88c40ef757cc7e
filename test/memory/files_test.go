//go:build integration

package memory

import (
	"archive/zip"
	"bytes"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

// uploadFiles adds a file through the knowledge page's form for files and returns the answer's status and page.
func (o *owner) uploadFiles(name string, file []byte) (int, string) {
	o.t.Helper()
	page := o.do(http.MethodGet, o.base+"/dashboard/knowledge", nil, "")
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		o.t.Fatalf("no CSRF token on the knowledge page: %d", page.status)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("csrf", m[1])
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(file)
	_ = mw.Close()
	res := o.do(http.MethodPost, o.base+"/dashboard/knowledge/files", &form, mw.FormDataContentType())
	return res.status, res.body
}

// TestHostileFilesStayWithinTheMemoryRequest adds, on a plan with the largest import bounds a Plan may set,
// files made to cost the most a file of that size can: a 4 MiB page of 400,000 tiny paragraphs, a page of as
// many as a page may hold, and a Word document that unpacks from under 4 MiB to 60 MiB of text, and checks that
// each is refused with a short page or added, and that the runtime's peak memory stays within its default
// memory request.
func TestHostileFilesStayWithinTheMemoryRequest(t *testing.T) {
	plan := ownerPlan()
	plan.ImportItems, plan.ImportBytes = tenant.MaxImportItems, tenant.MaxImportBytes
	r := startDashboardRuntime(t, filepath.Join(t.TempDir(), "parley.db"), &tenant.Bundle{MerchantID: "shop", DisplayName: "Shop",
		Plan: plan, Owners: []tenant.Owner{{Email: "owner@shop.example"}}})
	o := signIn(t, r.URL, "owner@shop.example")

	page := func(paragraphs int) []byte {
		return []byte("<!DOCTYPE html><title>Many</title>" + strings.Repeat("<p>a b</p>", paragraphs))
	}
	var docx bytes.Buffer
	z := zip.NewWriter(&docx)
	w, _ := z.Create("word/document.xml")
	_, _ = w.Write([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`))
	para := []byte(`<w:p><w:r><w:t>` + strings.Repeat("word ", 200) + `</w:t></w:r></w:p>`)
	for range 60 << 20 / len(para) {
		_, _ = w.Write(para)
	}
	_, _ = w.Write([]byte(`</w:body></w:document>`))
	_ = z.Close()

	for _, tc := range []struct {
		name, file string
		body       []byte
		status     int
		want       string
	}{
		{"a page of 400,000 paragraphs", "many.html", page((tenant.MaxImportBytes - 2048) / 10), http.StatusRequestEntityTooLarge, "many.html: the file is too large to read."},
		{"a page of 99,000 paragraphs", "most.html", page(99_000), http.StatusSeeOther, ""},
		{"a Word document of 60 MiB of text", "bomb.docx", docx.Bytes(), http.StatusRequestEntityTooLarge, "bomb.docx: the file is too large to read."},
	} {
		status, body := o.uploadFiles(tc.file, tc.body)
		t.Logf("%s: a %.2f MiB file, answered %d with a page of %d KiB", tc.name, float64(len(tc.body))/(1<<20), status, len(body)>>10)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d, want %d with %q", tc.name, status, tc.status, tc.want)
		}
	}
	r.checkPeak(t, "pages of tiny paragraphs and a DOCX of 60 MiB of text")
}
