package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// eachConversation: EachConversation gives every conversation the filter keeps, newest first, each once, with
// all its messages oldest first, across pages of conversations and pages cut by their messages; nothing of
// another merchant; and stops at fn's error.
func (h harness) eachConversation(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	// 230 short conversations, a minute apart, and between them three long ones of 800 messages, which no page
	// of 2,000 messages holds together.
	const short = 230
	long := map[int]bool{40: true, 41: true, 42: true}
	for i := range short {
		at := Base.Add(time.Duration(i) * time.Minute)
		id := fmt.Sprintf("c%03d", i)
		record(t, s, Exchange("m1", id, at, "question "+id, "answer "+id))
		if long[i] {
			for j := 1; j < 400; j++ {
				record(t, s, Exchange("m1", id, at.Add(time.Duration(j)*time.Millisecond), fmt.Sprintf("more %d", j), "ok"))
			}
		}
	}
	record(t, s, Exchange("m2", "c000", Base, "other merchant", "ok"))

	var got []string
	err := s.EachConversation(ctx, "m1", store.ConversationFilter{Limit: 1, Cursor: "ignored"}, func(c store.Conversation, msgs []store.Message) error {
		got = append(got, c.ID)
		want := 2
		if c.ID == "c040" || c.ID == "c041" || c.ID == "c042" {
			want = 800
		}
		if len(msgs) != want || c.MessageCount != want || msgs[0].Text != "question "+c.ID {
			t.Errorf("%s: %d messages (count %d), the first %q; want %d, the first its question", c.ID, len(msgs), c.MessageCount, msgs[0].Text, want)
		}
		if !slices.IsSortedFunc(msgs, func(a, b store.Message) int { return a.CreatedAt.Compare(b.CreatedAt) }) {
			t.Errorf("%s: messages not oldest first", c.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, short)
	for i := range short {
		want[i] = fmt.Sprintf("c%03d", short-1-i)
	}
	if !slices.Equal(got, want) {
		t.Errorf("EachConversation gave %d conversations %v..., want %d newest first", len(got), got[:min(len(got), 5)], short)
	}

	// From and To bound the creation time.
	got = nil
	f := store.ConversationFilter{From: Base.Add(10 * time.Minute), To: Base.Add(20 * time.Minute)}
	if err := s.EachConversation(ctx, "m1", f, func(c store.Conversation, _ []store.Message) error {
		got = append(got, c.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0] != "c019" || got[9] != "c010" {
		t.Errorf("within [10m, 20m): %v, want c019 to c010", got)
	}

	stop := errors.New("stop")
	n := 0
	err = s.EachConversation(ctx, "m1", store.ConversationFilter{}, func(store.Conversation, []store.Message) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("after fn's error: %v after %d calls, want stop after 1", err, n)
	}
}
