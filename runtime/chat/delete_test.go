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

// The deletions log what they deleted by count, never the content; an ID no record can have is not found.
func TestDeletionsLogCountsNotContent(t *testing.T) {
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
	if _, err := svc.Answer(ctx, m, chat.Question{Message: "Write to " + secret, ConversationID: "c1"}); err != nil {
		t.Fatal(err)
	}
	leads, _, err := st.ListLeads(ctx, m.MerchantID, store.LeadFilter{})
	if err != nil || len(leads) != 1 {
		t.Fatalf("leads: %v, %v", leads, err)
	}
	if err := svc.DeleteLead(ctx, m, leads[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteConversation(ctx, m, "c1"); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"deleted a lead"`) || !strings.Contains(out, `"msg":"deleted a conversation"`) ||
		!strings.Contains(out, `"rows":`) {
		t.Errorf("the deletions are not logged with their counts:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("a deletion's log names the content:\n%s", out)
	}
	for _, id := range []string{"", "\xff", "a\x00b"} {
		if err := svc.DeleteConversation(ctx, m, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteConversation(%q): %v, want ErrNotFound", id, err)
		}
		if err := svc.DeleteLead(ctx, m, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteLead(%q): %v, want ErrNotFound", id, err)
		}
	}
}
