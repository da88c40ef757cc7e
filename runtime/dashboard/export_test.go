package dashboard_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The conversations page links to the download of its dates' conversations, which holds the merchant's own
// conversations with their messages, in JSON Lines and in CSV.
func TestConversationsExport(t *testing.T) {
	e := newEnv(t)
	_, conv := e.chat(t, "alpha", "Do you ship to Norway?")
	_, _ = e.chat(t, "beta", "beta's secret question")
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")

	page := c.get("/dashboard/conversations?from=2020-01-01")
	if !strings.Contains(page.Body, `href="/dashboard/conversations.csv?from=2020-01-01&amp;to="`) {
		t.Errorf("the conversations page does not link to the CSV download of its dates:\n%s", page.Body)
	}

	res := c.get("/dashboard/conversations.jsonl?from=2020-01-01")
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Disposition"), "conversations-alpha-") {
		t.Fatalf("the JSON Lines download: %d %v", res.StatusCode, res.Header)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(res.Body))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, line)
	}
	if len(lines) != 1 || lines[0]["id"] != conv || len(lines[0]["messages"].([]any)) != 2 {
		t.Errorf("the JSON Lines download: %s", res.Body)
	}

	res = c.get("/dashboard/conversations.csv")
	rows, err := csv.NewReader(strings.NewReader(res.Body)).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil || len(rows) != 3 || rows[1][0] != conv || rows[1][6] != "Do you ship to Norway?" {
		t.Errorf("the CSV download: %d %v\n%s", res.StatusCode, err, res.Body)
	}
	if strings.Contains(res.Body, "beta") {
		t.Errorf("alpha's download holds beta's conversation:\n%s", res.Body)
	}

	// Dates after every conversation: the header line alone.
	res = c.get("/dashboard/conversations.csv?from=2099-01-01")
	if res.StatusCode != http.StatusOK || strings.Count(res.Body, "\n") != 1 {
		t.Errorf("an empty range: %d %q", res.StatusCode, res.Body)
	}
	if res := c.get("/dashboard/conversations.csv?from=yesterday"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad date: %d, want 400", res.StatusCode)
	}
}
