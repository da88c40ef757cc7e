package server

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

// upload is a multipart/form-data body of files (name, content type, body) and fields, and its Content-Type.
type upload struct {
	files  [][3]string
	fields [][2]string
}

func (u upload) encode(t *testing.T) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range u.fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range u.files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+f[0]+`"`)
		if f[1] != "" {
			h.Set("Content-Type", f[1])
		}
		part, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := part.Write([]byte(f[2])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), b.String()
}

func testdataFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *env) upload(t *testing.T, owner string, u upload) response {
	t.Helper()
	ct, body := u.encode(t)
	return e.do(http.MethodPost, "/api/v1/knowledge/files", map[string]string{"Authorization": owner, "Content-Type": ct}, body)
}

func TestUploadKnowledgeFiles(t *testing.T) {
	e := newEnv(t)
	pdf := testdataFile(t, "tent-care.pdf")
	r := e.upload(t, e.ownerOf("alpha"), upload{
		files:  [][3]string{{"tent-care.pdf", "application/pdf", pdf}},
		fields: [][2]string{{"url", "https://alpha.example/files/tent-care.pdf"}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	items := r.json(t)["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("%d items, want a page each: %s", len(items), r.body)
	}
	second := items[1].(map[string]any)
	if second["title"] != "Tent care guide (page 2)" || second["url"] != "https://alpha.example/files/tent-care.pdf#page=2" ||
		!strings.Contains(second["content"].(string), "Store the tent dry") {
		t.Errorf("the second page's item: %v", second)
	}
	// Several files at once, and the items are the uploading merchant's alone.
	r = e.upload(t, e.ownerOf("alpha"), upload{files: [][3]string{
		{"returns.html", "text/html", testdataFile(t, "returns.html")}, {"faq.csv", "", testdataFile(t, "faq.csv")},
	}})
	if r.status != http.StatusCreated || len(r.json(t)["items"].([]any)) != 8 {
		t.Fatalf("two files: %d %s", r.status, r.body)
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge?limit=100", map[string]string{"Authorization": e.ownerOf("beta")}, ""); len(r.json(t)["data"].([]any)) != 0 {
		t.Fatalf("another merchant sees the items: %s", r.body)
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge?tag=faq.csv", map[string]string{"Authorization": e.ownerOf("alpha")}, ""); len(r.json(t)["data"].([]any)) != 3 {
		t.Fatalf("the items of a file by its tag: %s", r.body)
	}
	// The visitor's answer cites the PDF's page.
	ans := e.chat(e.keys["alpha-sk"], `{"message": "How do I store my tent?"}`)
	if !strings.Contains(string(ans.body), "tent-care.pdf#page=2") {
		t.Fatalf("the answer does not cite the page: %s", ans.body)
	}
}

// TestUploadedWordSectionsCiteTheirPlace: each section of a Word document links to a place of its own in the
// file, as a PDF's pages do, and the file uploaded again links its sections as before, so that citations
// already given still point at the same sections.
func TestUploadedWordSectionsCiteTheirPlace(t *testing.T) {
	e := newEnv(t)
	urls := func() []string {
		t.Helper()
		r := e.upload(t, e.ownerOf("alpha"), upload{
			files:  [][3]string{{"warranty.docx", "", testdataFile(t, "warranty.docx")}},
			fields: [][2]string{{"url", "https://alpha.example/files/warranty.docx"}},
		})
		if r.status != http.StatusCreated {
			t.Fatalf("upload: %d %s", r.status, r.body)
		}
		var out []string
		for _, it := range r.json(t)["items"].([]any) {
			out = append(out, it.(map[string]any)["url"].(string))
		}
		return out
	}
	first := urls()
	want := []string{"https://alpha.example/files/warranty.docx#section=warranty-conditions",
		"https://alpha.example/files/warranty.docx#section=stoves",
		"https://alpha.example/files/warranty.docx#section=what-it-does-not-cover"}
	if !slices.Equal(first, want) {
		t.Errorf("the sections link %q, want %q", first, want)
	}
	if again := urls(); !slices.Equal(again, first) {
		t.Errorf("uploaded again, the sections link %q, want %q as before", again, first)
	}
	ans := e.chat(e.keys["alpha-sk"], `{"message": "How long are stoves covered?"}`)
	if !strings.Contains(string(ans.body), "warranty.docx#section=stoves") {
		t.Errorf("the answer does not cite the stoves section: %s", ans.body)
	}
}

func TestUploadKnowledgeFilesRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("small", func(b *tenant.Bundle) { b.Plan.ImportBytes = 2000 })
	owner := e.ownerOf("alpha")
	html := testdataFile(t, "returns.html")
	good := [3]string{"returns.html", "text/html", html}
	tests := []struct {
		name    string
		owner   string
		u       upload
		status  int
		code    string
		message string
	}{
		{"no files", owner, upload{}, 422, codeValidationFailed, "no files"},
		{"an image", owner, upload{files: [][3]string{good, {"logo.png", "image/png", "\x89PNG\r\n"}}}, 415, codeUnsupportedMedia, "logo.png: unsupported document type: image/png"},
		{"a scan", owner, upload{files: [][3]string{{"scan.pdf", "application/pdf", testdataFile(t, "scan.pdf")}}}, 422, codeValidationFailed, "scan.pdf: the PDF has no text layer"},
		{"a damaged Word file", owner, upload{files: [][3]string{{"x.docx", "", "PK\x03\x04"}}}, 422, codeValidationFailed, "x.docx: malformed document"},
		{"a url for two files", owner, upload{files: [][3]string{good, good}, fields: [][2]string{{"url", "https://alpha.example/a"}}}, 422, codeValidationFailed, "one file"},
		{"a url of another scheme", owner, upload{files: [][3]string{good}, fields: [][2]string{{"url", "javascript:alert(1)"}}}, 422, codeValidationFailed, "not an absolute http"},
		{"an unknown field", owner, upload{files: [][3]string{good}, fields: [][2]string{{"files", "x"}}}, 400, codeInvalidRequest, "unknown form field"},
		{"too many files", owner, upload{files: slices.Repeat([][3]string{{"a.txt", "", "Some words."}}, 21)}, 422, codeValidationFailed, "more than the 20 files"},
		{"more bytes than the plan's import", e.ownerOf("small"), upload{files: [][3]string{good}}, 413, codePayloadTooLarge, "2000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.upload(t, tt.owner, tt.u)
			if r.status != tt.status || r.errorCode(t) != tt.code || !strings.Contains(string(r.body), tt.message) {
				t.Fatalf("%d %s, want %d %s saying %q", r.status, r.body, tt.status, tt.code, tt.message)
			}
		})
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge", map[string]string{"Authorization": owner}, ""); len(r.json(t)["data"].([]any)) != 0 {
		t.Fatalf("a refused upload stored items: %s", r.body)
	}
	// Not multipart, or multipart cut short.
	if r := e.do(http.MethodPost, "/api/v1/knowledge/files", map[string]string{"Authorization": owner}, `{"file": "x"}`); r.status != 415 || r.errorCode(t) != codeUnsupportedMedia {
		t.Fatalf("JSON: %d %s", r.status, r.body)
	}
	ct, body := upload{files: [][3]string{good}}.encode(t)
	if r := e.do(http.MethodPost, "/api/v1/knowledge/files", map[string]string{"Authorization": owner, "Content-Type": ct}, body[:len(body)/2]); r.status != 400 || r.errorCode(t) != codeInvalidRequest {
		t.Fatalf("a body cut short: %d %s", r.status, r.body)
	}
	// Without credentials.
	if r := e.upload(t, "", upload{files: [][3]string{good}}); r.status != 401 {
		t.Fatalf("without a token: %d", r.status)
	}
}

// TestUploadingAFileAgainReplacesItsItems uploads a file, then a changed version under the same name, on each
// store: the second upload's items take the place of the first's (not beside them), while another file's items,
// items typed by hand and another merchant's file of that name stay.
func TestUploadingAFileAgainReplacesItsItems(t *testing.T) {
	onEachStore(t, testReupload)
}

func testReupload(t *testing.T, e *env) {
	owner := e.ownerOf("alpha")
	first := "# Returns\n\nYou may return any item within 30 days.\n\n# Refunds\n\nRefunds take five days.\n"
	for _, u := range []struct {
		owner string
		u     upload
	}{
		{owner, upload{files: [][3]string{{"returns.md", "text/markdown", first}, {"care.txt", "", testdataFile(t, "care.txt")}}}},
		{e.ownerOf("beta"), upload{files: [][3]string{{"returns.md", "text/markdown", first}}}},
	} {
		if r := e.upload(t, u.owner, u.u); r.status != http.StatusCreated {
			t.Fatalf("upload: %d %s", r.status, r.body)
		}
	}
	hand := e.do(http.MethodPost, "/api/v1/knowledge", map[string]string{"Authorization": owner, "Content-Type": "application/json"},
		`{"title":"Returns by hand","content":"Our own words on returns.","tags":["returns.md"]}`)
	if hand.status != http.StatusCreated {
		t.Fatalf("an item by hand: %d %s", hand.status, hand.body)
	}
	list := func(who string) map[string]int {
		out := map[string]int{}
		for _, k := range e.do(http.MethodGet, "/api/v1/knowledge?limit=100", map[string]string{"Authorization": who}, "").json(t)["data"].([]any) {
			out[k.(map[string]any)["title"].(string)]++
		}
		return out
	}
	before := list(owner)

	second := "# Returns\n\nYou may return any item within 60 days.\n"
	r := e.upload(t, owner, upload{files: [][3]string{{"returns.md", "text/markdown", second}}})
	if r.status != http.StatusCreated || len(r.json(t)["items"].([]any)) != 1 {
		t.Fatalf("the upload again: %d %s", r.status, r.body)
	}
	after := list(owner)
	if after["Returns"] != 1 || after["Refunds"] != 0 {
		t.Errorf("after the upload again: %v; want the new Returns item alone of returns.md", after)
	}
	if after["Returns by hand"] != 1 || len(after) != len(before)-1 {
		t.Errorf("items besides the file's changed: before %v, after %v", before, after)
	}
	if got := list(e.ownerOf("beta")); got["Returns"] != 1 || got["Refunds"] != 1 {
		t.Errorf("the other merchant's file of the same name: %v", got)
	}
	ans := e.chat(e.keys["alpha-sk"], `{"message": "Within how many days may I return an item?"}`)
	if !strings.Contains(string(ans.body), "60 days") || strings.Contains(string(ans.body), "30 days") {
		t.Errorf("the answer after the upload again: %s", ans.body)
	}
}
