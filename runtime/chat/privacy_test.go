package chat_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// A data subject's erasure logs counts and the erasure's ID, never who was erased nor what.
func TestSubjectErasureLogsCountsNotContent(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var logs bytes.Buffer
	svc, err := chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{}, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m := merchant(0)
	const secret = "ana.secret@example.com"
	if _, err := svc.Answer(ctx, m, chat.Question{Message: "Write to " + secret, ConversationID: "c1", VisitorID: "v-secret-visitor"}); err != nil {
		t.Fatal(err)
	}
	subject, err := chat.ParseSubject("", " "+secret+" ", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.EraseSubject(ctx, m, subject)
	if err != nil {
		t.Fatal(err)
	}
	if e.Conversations != 1 || e.Messages != 2 || e.Leads != 1 {
		t.Errorf("erased %+v, want 1 conversation, 2 messages, 1 lead", e)
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"erased a data subject's records"`) || !strings.Contains(out, `"erasure":"`+e.ID+`"`) ||
		!strings.Contains(out, `"messages":2`) {
		t.Errorf("the erasure is not logged with its counts:\n%s", out)
	}
	if strings.Contains(out, secret) || strings.Contains(out, "v-secret-visitor") {
		t.Errorf("the erasure's log names the subject:\n%s", out)
	}
}

func TestParseSubject(t *testing.T) {
	for _, tc := range []struct {
		visitor, email, phone string
		want                  store.Subject
		field                 string
	}{
		{visitor: "v1", want: store.Subject{VisitorID: "v1"}},
		{email: " Ana@Example.com ", phone: "+31 6 1234 5678", want: store.Subject{Email: "Ana@Example.com", Phone: "+31 6 1234 5678"}},
		{email: "ana", field: chat.FieldEmail},
		{phone: "123", field: chat.FieldPhone},
		{visitor: "v\x00", field: chat.FieldVisitorID},
		{visitor: "\xff", field: chat.FieldVisitorID},
		{visitor: strings.Repeat("v", chat.MaxSubjectVisitorIDBytes+1), field: chat.FieldVisitorID},
	} {
		got, err := chat.ParseSubject(tc.visitor, tc.email, tc.phone)
		var se *chat.SubjectError
		switch {
		case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field):
			t.Errorf("ParseSubject(%q, %q, %q): %v, want a problem of %s", tc.visitor, tc.email, tc.phone, err, tc.field)
		case tc.field == "" && (err != nil || got != tc.want):
			t.Errorf("ParseSubject(%q, %q, %q) = %+v, %v; want %+v", tc.visitor, tc.email, tc.phone, got, err, tc.want)
		}
	}
	if _, err := chat.ParseSubject("", " ", ""); !errors.Is(err, chat.ErrNoSubject) {
		t.Errorf("ParseSubject of nothing: %v, want ErrNoSubject", err)
	}
}
