// Package transcript writes a merchant's conversations for download, as JSON Lines (one conversation with its
// messages a line) or CSV (one message a row), one conversation at a time, so that an export of any size holds
// one conversation in memory. The API's export and the dashboard's both write through it.
package transcript

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// The formats a transcript is written in.
const (
	JSONL = "jsonl"
	CSV   = "csv"
)

// Formats lists the formats, as the API's format parameter and the dashboard's links name them.
var Formats = []string{JSONL, CSV}

// ContentType is the media type of a format.
func ContentType(format string) string {
	if format == CSV {
		return "text/csv; charset=utf-8"
	}
	return "application/jsonl; charset=utf-8"
}

// Writer writes conversations in one format.
type Writer interface {
	// Write writes a conversation and its messages.
	Write(store.Conversation, []store.Message) error
	// Close writes what is buffered; it does not close the underlying writer.
	Close() error
}

// New returns a Writer of format to w; a CSV writer writes its header line first.
func New(w io.Writer, format string) (Writer, error) {
	switch format {
	case JSONL:
		return &jsonlWriter{enc: json.NewEncoder(w)}, nil
	case CSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(csvHeader); err != nil {
			return nil, err
		}
		return &csvWriter{w: cw}, nil
	}
	return nil, fmt.Errorf("no transcript format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// conversationJSON is a line of JSON Lines: the fields of the API's conversation detail, without its leads.
type conversationJSON struct {
	ID              string        `json:"id"`
	VisitorID       string        `json:"visitor_id,omitempty"`
	CreatedAt       time.Time     `json:"created_at"`
	UpdatedAt       time.Time     `json:"updated_at"`
	MessageCount    int           `json:"message_count"`
	UnansweredCount int           `json:"unanswered_count"`
	HasLead         bool          `json:"has_lead"`
	Messages        []messageJSON `json:"messages"`
}

type messageJSON struct {
	ID        string       `json:"id"`
	Role      store.Role   `json:"role"`
	Text      string       `json:"text"`
	Answered  bool         `json:"answered"`
	Sources   []sourceJSON `json:"sources,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
}

type sourceJSON struct {
	KnowledgeID string `json:"knowledge_id"`
	Title       string `json:"title"`
	URL         string `json:"url,omitempty"`
}

type jsonlWriter struct{ enc *json.Encoder }

func (j *jsonlWriter) Write(c store.Conversation, msgs []store.Message) error {
	line := conversationJSON{ID: c.ID, VisitorID: c.VisitorID, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		MessageCount: c.MessageCount, UnansweredCount: c.Unanswered, HasLead: c.HasLead, Messages: make([]messageJSON, len(msgs))}
	for i, m := range msgs {
		line.Messages[i] = messageJSON{ID: m.ID, Role: m.Role, Text: m.Text, Answered: m.Answered, CreatedAt: m.CreatedAt.UTC()}
		for _, s := range m.Sources {
			line.Messages[i].Sources = append(line.Messages[i].Sources, sourceJSON{KnowledgeID: s.KnowledgeID, Title: s.Title, URL: s.URL})
		}
	}
	return j.enc.Encode(line)
}

func (*jsonlWriter) Close() error { return nil }

// csvHeader is the first line of a CSV transcript: one row a message, with its conversation's fields.
var csvHeader = []string{"conversation_id", "conversation_created_at", "visitor_id", "message_id", "created_at", "role",
	"text", "answered", "sources"}

type csvWriter struct{ w *csv.Writer }

func (c *csvWriter) Write(conv store.Conversation, msgs []store.Message) error {
	for _, m := range msgs {
		ids := make([]string, len(m.Sources))
		for i, s := range m.Sources {
			ids[i] = s.KnowledgeID
		}
		if err := c.w.Write([]string{conv.ID, conv.CreatedAt.UTC().Format(time.RFC3339Nano), cell(conv.VisitorID), m.ID,
			m.CreatedAt.UTC().Format(time.RFC3339Nano), string(m.Role), cell(m.Text), strconv.FormatBool(m.Answered),
			cell(strings.Join(ids, " "))}); err != nil {
			return err
		}
	}
	return c.w.Error()
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	return c.w.Error()
}

// cell keeps a spreadsheet from reading text a visitor wrote as a formula: a cell that starts as one does, or
// with an apostrophe, gets a leading apostrophe, which spreadsheets show as text (as the dashboard's lead export
// does).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r'", rune(s[0])) {
		return "'" + s
	}
	return s
}
