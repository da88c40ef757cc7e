package dashboard_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// uploadFiles posts files to the knowledge page's form for files, as the page does: the CSRF token first.
func (c *client) uploadFiles(token, url string, names ...string) reply {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if token != "" {
		_ = mw.WriteField("csrf", token)
	}
	for _, name := range names {
		content, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", name))
		if err != nil {
			c.t.Fatal(err)
		}
		fw, _ := mw.CreateFormFile("file", name)
		_, _ = fw.Write(content)
	}
	_ = mw.WriteField("url", url)
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.base+"/dashboard/knowledge/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", c.base)
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return reply{StatusCode: res.StatusCode, Header: res.Header, URL: req.URL, Body: b.String()}
}

func TestKnowledgeFiles(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()
	// alpha has 2 of 5 items.
	for _, tc := range []struct {
		name, token, url string
		files            []string
		status           int
		want             string
	}{
		{"a forged form", "", "", []string{"tent-care.pdf"}, http.StatusForbidden, "came from elsewhere"},
		{"no files", token, "", nil, http.StatusBadRequest, "Choose one or more files to add."},
		{"a scan", token, "", []string{"care.txt", "scan.pdf"}, http.StatusUnprocessableEntity, "scan.pdf: there is no text in it."},
		{"an address for two files", token, "https://alpha.example/f", []string{"care.txt", "faq.csv"}, http.StatusUnprocessableEntity, "An address is for one file"},
		{"past the plan's limit", token, "", []string{"returns.html"}, http.StatusConflict, "The 5 items would pass your plan&#39;s limit of 5 items."},
	} {
		res := c.uploadFiles(tc.token, tc.url, tc.files...)
		if res.StatusCode != tc.status || !strings.Contains(res.Body, tc.want) {
			t.Errorf("%s: %d, want %d with %q in the page", tc.name, res.StatusCode, tc.status, tc.want)
		}
		if n := e.knowledgeCount(t, "alpha"); n != 2 {
			t.Fatalf("%s: alpha has %d items, want 2", tc.name, n)
		}
	}
	res := c.uploadFiles(token, "https://alpha.example/files/tent-care.pdf", "tent-care.pdf")
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "knowledge?ok=uploaded") {
		t.Fatalf("a good upload: %d %s", res.StatusCode, res.Body)
	}
	page := c.get("/dashboard/knowledge?ok=uploaded")
	if !strings.Contains(page.Body, "The files&#39; items were added.") || !strings.Contains(page.Body, "Tent care guide (page 2)") ||
		e.knowledgeCount(t, "alpha") != 4 {
		t.Fatalf("after the upload: %s", page.Body)
	}
}
