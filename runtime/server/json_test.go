package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"
	"time"
)

// FuzzExactFields checks exactFields, which scans a body byte by byte, against the same checks made on
// encoding/json's token stream, for every body that decodeJSON would pass to it (one valid JSON value).
func FuzzExactFields(f *testing.F) {
	for _, seed := range []string{
		`{"message": "hi"}`, `{"message": "hi", "message": "again"}`, `{"Message": "hi"}`, `{"mesage": "hi"}`,
		`{"message": "a\"b", "conversation_id": "c"}`, `{"m\u0065ssage": "hi"}`, `{"message": {"a": 1, "a": 2}}`,
		`[{"a": [1, {"b": 2, "b": 3}]}, "x"]`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"a":10}`,
		`{"` + "\xff" + `": 1, "` + "\xfe" + `": 2}`, `"x"`, `null`, `{"message": "\\", "k": {"\\": 1}}`,
	} {
		f.Add(seed)
	}
	types := []reflect.Type{reflect.TypeFor[chatRequest](), reflect.TypeFor[map[string]any](), reflect.TypeFor[struct{}]()}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		for _, typ := range types {
			got, want := exactFields([]byte(body), typ), exactFieldsByTokens([]byte(body), typ)
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Fatalf("%s as %v: got %v, want %v", body, typ, got, want)
			}
		}
	})
}

// exactFieldsByTokens is exactFields made with encoding/json's tokens, the way it was first written.
func exactFieldsByTokens(body []byte, t reflect.Type) error {
	known := map[string]bool{}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			known[jsonName(t.Field(i))] = true
		}
	}
	type object struct {
		seen    map[string]bool
		wantKey bool
	}
	var stack []*object // nil entries are arrays
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			name, _ := tok.(string)
			if top.seen[name] {
				return newError(400, codeInvalidRequest, "field %q appears twice", name)
			}
			if len(stack) == 1 && len(known) > 0 && !known[name] {
				return newError(400, codeInvalidRequest, "unknown field %q (field names are case-sensitive)", name)
			}
			top.seen[name] = true
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{seen: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// TestChatResponseJSON checks that a chat response's own encoding is what encoding/json's Encoder writes.
func TestChatResponseJSON(t *testing.T) {
	at := time.Date(2026, 11, 24, 6, 7, 8, 123456789, time.UTC)
	for _, c := range []chatResponse{
		{ConversationID: "conv_1", MessageID: "msg_2", Answer: "Orders ship in <2> days & \"free\"\u2028.\n", Answered: true,
			Sources: []sourceJSON{{KnowledgeID: "kn_1", Title: "Shipping", URL: "https://shop.example/s?a=1&b=2", Snippet: "ships", Score: 0.8125},
				{KnowledgeID: "kn_2", Title: "", Snippet: "", Score: 1e-7}},
			CreatedAt: at},
		{ConversationID: "c", MessageID: "m", Answer: "I don't know \xff.", Sources: []sourceJSON{}, CreatedAt: at.In(time.FixedZone("", 3600)).Truncate(time.Second)},
		{},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(c); err != nil {
			t.Fatal(err)
		}
		got, err := c.appendJSON(nil)
		if err != nil || string(got) != want.String() {
			t.Errorf("got %s %v, want %s", got, err, want.String())
		}
	}
	if _, err := (chatResponse{Sources: []sourceJSON{{Score: math.NaN()}}}).appendJSON(nil); err == nil {
		t.Error("a NaN score was encoded")
	}
}
