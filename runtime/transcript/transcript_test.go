package transcript_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/transcript"
)

var (
	at   = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	conv = store.Conversation{ID: "c1", VisitorID: "=v1", CreatedAt: at, UpdatedAt: at.Add(time.Second), MessageCount: 2, Unanswered: 1}
	msgs = []store.Message{
		{ID: "m1", Role: store.RoleVisitor, Text: "-1+1 is \"what\",\nreally?", CreatedAt: at, Answered: true},
		{ID: "m2", Role: store.RoleAssistant, Text: "See the FAQ", CreatedAt: at.Add(time.Second), Answered: false,
			Sources: []store.Source{{KnowledgeID: "k1", Title: "FAQ"}, {KnowledgeID: "k2", Title: "Shipping"}}},
	}
)

func write(t *testing.T, format string) string {
	t.Helper()
	var b bytes.Buffer
	w, err := transcript.New(&b, format)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := w.Write(conv, msgs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestJSONLines(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(write(t, transcript.JSONL), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one a conversation", len(lines))
	}
	var got struct {
		ID       string `json:"id"`
		Messages []struct {
			Text    string `json:"text"`
			Sources []struct {
				KnowledgeID string `json:"knowledge_id"`
			} `json:"sources"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "c1" || len(got.Messages) != 2 || got.Messages[0].Text != msgs[0].Text || len(got.Messages[1].Sources) != 2 {
		t.Errorf("line %s", lines[0])
	}
}

func TestCSV(t *testing.T) {
	rows, err := csv.NewReader(strings.NewReader(write(t, transcript.CSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0][0] != "conversation_id" {
		t.Fatalf("rows %q, want a header and one a message", rows)
	}
	// Text a spreadsheet would run as a formula is kept as text; line breaks and quotes survive.
	if rows[1][2] != "'=v1" || rows[1][6] != "'"+msgs[0].Text || rows[2][8] != "k1 k2" || rows[2][7] != "false" {
		t.Errorf("rows %q", rows[1:3])
	}
}

func TestUnknownFormat(t *testing.T) {
	if _, err := transcript.New(&bytes.Buffer{}, "xml"); err == nil {
		t.Error("an unknown format was accepted")
	}
}
