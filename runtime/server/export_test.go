package server

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
)

func TestExportConversations(t *testing.T) {
	// The document's files are strings to kin-openapi; their lines and rows are checked below. No test here runs
	// in parallel, so registering the decoders races with no validation.
	openapi3filter.RegisterBodyDecoder("application/jsonl", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/csv", openapi3filter.PlainBodyDecoder)
	e := newEnv(t)
	for _, c := range []struct{ merchant, id, message string }{
		{"alpha", "c1", "Do you ship to Norway?"},
		{"alpha", "c2", "=HYPERLINK(\"http://evil.example\")"},
		{"beta", "c3", "beta's secret question"},
	} {
		if res := e.startFor(c.merchant, "v1", `{"message": `+quote(c.message)+`, "conversation_id": "`+c.id+`"}`); res.status != http.StatusOK {
			t.Fatalf("chat: %d %s", res.status, res.body)
		}
		e.clock.Advance(1)
	}
	alpha := map[string]string{"Authorization": e.ownerOf("alpha")}

	res := e.do(http.MethodGet, "/api/v1/conversations/export", alpha, "")
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "application/jsonl") ||
		!strings.Contains(res.header.Get("Content-Disposition"), `filename="conversations-alpha-`) {
		t.Fatalf("JSON Lines export: %d %v %s", res.status, res.header, res.body)
	}
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(res.body))
	for sc.Scan() {
		var line struct {
			ID       string `json:"id"`
			Messages []struct {
				Role string `json:"role"`
				Text string `json:"text"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if len(line.Messages) != 2 || line.Messages[0].Role != "visitor" {
			t.Errorf("conversation %s: messages %+v, want the question and its answer", line.ID, line.Messages)
		}
		ids = append(ids, line.ID)
	}
	if strings.Join(ids, ",") != "c2,c1" {
		t.Errorf("exported %v, want c2, c1: alpha's, newest first", ids)
	}

	res = e.do(http.MethodGet, "/api/v1/conversations/export?format=csv", alpha, "")
	rows, err := csv.NewReader(bytes.NewReader(res.body)).ReadAll()
	if res.status != http.StatusOK || err != nil || !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV export: %d %v %v\n%s", res.status, res.header, err, res.body)
	}
	if len(rows) != 5 || rows[0][0] != "conversation_id" || rows[1][0] != "c2" || rows[1][6] != `'=HYPERLINK("http://evil.example")` ||
		rows[3][0] != "c1" || rows[3][6] != "Do you ship to Norway?" {
		t.Errorf("CSV export rows: %q", rows)
	}
	if strings.Contains(string(res.body), "beta") {
		t.Errorf("alpha's export holds beta's conversation:\n%s", res.body)
	}

	// from and to bound the creation time; an empty range is the header line alone.
	res = e.do(http.MethodGet, "/api/v1/conversations/export?format=csv&from=2030-01-01", alpha, "")
	if res.status != http.StatusOK || strings.Count(string(res.body), "\n") != 1 {
		t.Errorf("an empty range: %d %q, want the header line alone", res.status, res.body)
	}

	for _, bad := range []string{"format=xml", "from=yesterday", "from=2026-11-10&to=2026-11-01", "format=%ZZ"} {
		if res := e.do(http.MethodGet, "/api/v1/conversations/export?"+bad, alpha, ""); res.status != http.StatusBadRequest || res.errorCode(t) != "invalid_request" {
			t.Errorf("?%s: %d %s, want 400 invalid_request", bad, res.status, res.body)
		}
	}
	// A merchant's servers export with the secret key, as they read conversations; the page's key reads nothing.
	if res := e.do(http.MethodGet, "/api/v1/conversations/export", map[string]string{"X-API-Key": e.keys["alpha-sk"]}, ""); res.status != http.StatusOK {
		t.Errorf("with the secret key: %d, want 200", res.status)
	}
	if res := e.do(http.MethodGet, "/api/v1/conversations/export", map[string]string{"X-API-Key": e.keys["alpha-pk"]}, ""); res.status != http.StatusForbidden {
		t.Errorf("with the publishable key: %d, want 403", res.status)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
