package dashboard_test

import (
	"bufio"
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// multipartHead is the start of an import form: fields (name, value) in order, then the first bytes of a large
// file, cut off; and its content type.
func multipartHead(fields ...string) ([]byte, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	fw, _ := mw.CreateFormFile("file", "big.csv")
	_, _ = fw.Write([]byte("title,content\n" + strings.Repeat("A,"+strings.Repeat("a", 1000)+"\n", 64)))
	return body.Bytes(), mw.FormDataContentType()
}

// stalledUpload sends req announcing a 4 MiB body, sends head of it and stalls, as a slow upload does; it returns
// the status of the runtime's answer, which must come while the upload stalls: within 5 seconds, a bound on the
// stalled peer.
func stalledUpload(t *testing.T, req *http.Request, head []byte) int {
	t.Helper()
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var h bytes.Buffer
	fmt.Fprintf(&h, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.URL.RequestURI(), req.URL.Host, 4<<20)
	_ = req.Header.Write(&h)
	h.WriteString("\r\n")
	if _, err := conn.Write(append(h.Bytes(), head...)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("no answer while the upload stalls: %v", err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// A dashboard post is refused before its body is read when its sender has no session, or has one but its form
// does not carry the session's token before its file: the answer comes while the upload is still stalled, and
// nothing is imported. Before, the whole body (up to 4 MiB) was read and held first, whoever sent it.
func TestPostsAreRefusedBeforeTheirBodyIsRead(t *testing.T) {
	e := newEnv(t)
	owner := newClient(t, e.url)
	owner.signIn("alpha@owners.example")
	token := owner.csrf()
	anonymous := newClient(t, e.url)
	for _, tt := range []struct {
		name   string
		c      *client
		path   string
		fields []string
	}{
		{"anonymous import", anonymous, "/dashboard/knowledge/import", []string{"csrf", token}},
		{"anonymous change", anonymous, "/dashboard/knowledge", []string{"csrf", token, "title", "Slow"}},
		{"anonymous preview", anonymous, "/dashboard/preview/chat", nil},
		{"owner's import without a token", owner, "/dashboard/knowledge/import", nil},
		{"owner's import with its file before its token", owner, "/dashboard/knowledge/import", []string{"title", "x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			head, contentType := multipartHead(tt.fields...)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", contentType)
			req.Header.Set("Origin", e.url)
			for _, ck := range tt.c.http.Jar.Cookies(req.URL) {
				req.AddCookie(ck)
			}
			if status := stalledUpload(t, req, head); status != http.StatusForbidden {
				t.Errorf("%d, want 403", status)
			}
		})
	}
	if n := e.knowledgeCount(t, "alpha"); n != 2 {
		t.Errorf("alpha has %d items, want its 2", n)
	}
}
