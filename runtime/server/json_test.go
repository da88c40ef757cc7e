package server

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// TestChatResponseJSON checks that a chat response's own encoding holds what encoding/json's Encoder writes for
// it, on a line of its own.
func TestChatResponseJSON(t *testing.T) {
	at := time.Date(2026, 11, 24, 6, 7, 8, 123456789, time.UTC)
	for _, c := range []chatResponse{
		{ConversationID: "conv_1", MessageID: "msg_2", Answer: "Orders ship in <2> days & \"free\"\u2028.\n", Answered: true,
			Sources: []sourceJSON{{KnowledgeID: "kn_1", Title: "Shipping", URL: "https://shop.example/s?a=1&b=2", Snippet: "ships", Score: 0.8125},
				{KnowledgeID: "kn_2", Title: "", Snippet: "", Score: 1e-7}},
			CreatedAt: at},
		{ConversationID: "c", MessageID: "m", Answer: "Orders ship in", FinishReason: "length", CreatedAt: at},
		{ConversationID: "c", MessageID: "m", Answer: "I don't know \xff.", Sources: []sourceJSON{}, CreatedAt: at.In(time.FixedZone("", 3600)).Truncate(time.Second)},
		{},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(c); err != nil {
			t.Fatal(err)
		}
		got, err := c.appendJSON(nil)
		if err != nil || !sameJSON(got, want.Bytes()) || !bytes.HasSuffix(got, []byte("}\n")) {
			t.Errorf("got %s %v, want %s", got, err, want.String())
		}
	}
	if _, err := (chatResponse{Sources: []sourceJSON{{Score: math.NaN()}}}).appendJSON(nil); err == nil {
		t.Error("a NaN score was encoded")
	}
}

// sameJSON reports whether a and b are valid JSON of equal values.
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}
