package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestReviewQueue: unanswered and thumbs-down answers show in the merchant's queue alone, paraphrases grouped and
// ranked by how often they were missed; listing the question under an item takes the group out, the next ask is
// answered from that item, and a miss after the fix brings it back.
func TestReviewQueue(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		var giftCards string
		for _, body := range []string{
			`{"title": "Shipping", "content": "Orders ship within 2 business days. Delivery to Canada takes 5 to 8 business days."}`,
			`{"title": "Gift cards", "content": "Gift cards come in any amount, never expire and are accepted at checkout."}`,
		} {
			res := e.do(http.MethodPost, "/api/v1/knowledge", owner, body)
			if res.status != http.StatusCreated {
				t.Fatalf("creating an item: %d %s", res.status, res.body)
			}
			giftCards = res.json(t)["id"].(string)
		}
		ask := func(visitor, conversation, question string) map[string]any {
			t.Helper()
			res := e.startFor("alpha", visitor, `{"message": "`+question+`", "conversation_id": "`+conversation+`"}`)
			if res.status != http.StatusOK {
				t.Fatalf("chat: %d %s", res.status, res.body)
			}
			return res.json(t)
		}
		for i, q := range []string{"Can I pay with a voucher code?", "can i pay with a voucher", "Can I pay with a voucher code?"} {
			if a := ask("v"+string(rune('1'+i)), "c"+string(rune('1'+i)), q); a["answered"] != false {
				t.Fatalf("%q was answered: %v", q, a)
			}
		}
		delivery := ask("v9", "c9", "How long does delivery to Canada take?")
		if res := e.rate("alpha", "v9", `{"message_id": "`+delivery["message_id"].(string)+`", "rating": "down", "comment": "it took 3 weeks"}`); res.status != http.StatusOK {
			t.Fatalf("rating: %d %s", res.status, res.body)
		}
		e.answerID("beta", "v1", "b1") // another merchant's traffic

		queue := e.review(owner)
		if len(queue) != 2 {
			t.Fatalf("the queue has %d groups, want 2: %v", len(queue), queue)
		}
		voucher, rated := queue[0], queue[1]
		if voucher.Asked != 3 || voucher.Unanswered != 3 || len(voucher.Questions) != 2 {
			t.Errorf("the voucher group = %+v; want 3 misses of 2 wordings, grouped", voucher)
		}
		if rated.Asked != 1 || rated.ThumbsDown != 1 || rated.Answer == "" || len(rated.Sources) == 0 ||
			len(rated.Comments) != 1 || rated.Comments[0] != "it took 3 weeks" {
			t.Errorf("the rated group = %+v", rated)
		}
		// Beta's queue holds its own miss alone.
		if got := e.review(map[string]string{"Authorization": e.ownerOf("beta")}); len(got) != 1 || got[0].Question != "Do you ship to Norway?" {
			t.Errorf("another merchant's queue is %+v, want its own miss alone", got)
		}
		if res := e.do(http.MethodGet, "/api/v1/review?format=csv", owner, ""); res.status != http.StatusOK ||
			!strings.Contains(string(res.body), "it took 3 weeks") || strings.Count(string(res.body), "\n") < 3 {
			t.Errorf("the CSV export: %d %s", res.status, res.body)
		}

		// The merchant lists the question under the gift cards item: the group leaves, the next ask is answered.
		keys, _ := json.Marshal([]string{voucher.Questions[0].Question, voucher.Questions[1].Question})
		if res := e.do(http.MethodPost, "/api/v1/review/fixes", map[string]string{"Authorization": e.ownerOf("beta")},
			`{"questions": `+string(keys)+`, "knowledge_id": "`+giftCards+`", "list_question": "Can I pay with a voucher code?"}`); res.status != http.StatusNotFound {
			t.Errorf("another merchant fixing with alpha's item: %d %s, want 404", res.status, res.body)
		}
		res := e.do(http.MethodPost, "/api/v1/review/fixes", owner,
			`{"questions": `+string(keys)+`, "knowledge_id": "`+giftCards+`", "list_question": "Can I pay with a voucher code?"}`)
		if res.status != http.StatusOK {
			t.Fatalf("fixing: %d %s", res.status, res.body)
		}
		e.clock.Advance(time.Second)
		if queue := e.review(owner); len(queue) != 1 || queue[0].ThumbsDown != 1 {
			t.Errorf("after the fix the queue is %+v, want the rated group alone", queue)
		}
		again := ask("v5", "c5", "Can I pay with a voucher code?")
		sources, _ := again["sources"].([]any)
		if again["answered"] != true || len(sources) == 0 || sources[0].(map[string]any)["knowledge_id"] != giftCards {
			t.Errorf("asked again after the fix: %v", again)
		}
		// Missed again after the fix (rated down): the group is back, with that miss alone.
		if res := e.rate("alpha", "v5", `{"message_id": "`+again["message_id"].(string)+`", "rating": "down"}`); res.status != http.StatusOK {
			t.Fatalf("rating: %d %s", res.status, res.body)
		}
		if queue := e.review(owner); len(queue) != 2 || queue[0].Asked+queue[1].Asked != 2 {
			t.Errorf("after a miss past the fix the queue is %+v, want both groups of one miss", queue)
		}

		// Did it work: this week's answers and ratings, and the fix's question asked since and answered.
		var progress struct {
			Weeks []struct {
				Answered, Unanswered, Rated int
				ThumbsDown                  int `json:"thumbs_down"`
			}
			Fixes []struct {
				Question      string
				AskedSince    int `json:"asked_since"`
				AnsweredSince int `json:"answered_since"`
			}
		}
		res = e.do(http.MethodGet, "/api/v1/analytics/feedback", owner, "")
		if err := json.Unmarshal(res.body, &progress); err != nil || res.status != http.StatusOK {
			t.Fatalf("feedback analytics: %d %s", res.status, res.body)
		}
		if n := len(progress.Weeks); n != 8 {
			t.Fatalf("%d weeks, want 8", n)
		}
		if w := progress.Weeks[7]; w.Answered != 2 || w.Unanswered != 3 || w.Rated != 2 || w.ThumbsDown != 2 {
			t.Errorf("this week = %+v; want 2 answered, 3 unanswered, 2 rated down", w)
		}
		answeredSince := map[string]int{}
		for _, f := range progress.Fixes {
			answeredSince[f.Question] = f.AnsweredSince
		}
		if len(progress.Fixes) != 2 || answeredSince["can i pay with a voucher code"] != 1 {
			t.Errorf("the fixes' results = %+v; want the listed question answered once since", progress.Fixes)
		}
		if res := e.do(http.MethodGet, "/api/v1/analytics/feedback?weeks=53", owner, ""); res.status != http.StatusBadRequest {
			t.Errorf("weeks=53: %d, want 400", res.status)
		}
	})
}

func TestReviewFixBadInput(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	for name, body := range map[string]string{
		"no questions":         `{"questions": []}`,
		"an empty question":    `{"questions": [""]}`,
		"listed under no item": `{"questions": ["a"], "list_question": "A?"}`,
		"too many questions":   `{"questions": [` + strings.Repeat(`"a",`, 100) + `"a"]}`,
	} {
		if res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, body); res.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, res.status, res.body)
		}
	}
	if res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, `{"questions": ["a"], "knowledge_id": "kn_none"}`); res.status != http.StatusNotFound {
		t.Errorf("an item that does not exist: %d %s, want 404", res.status, res.body)
	}
	if res := e.do(http.MethodGet, "/api/v1/review?format=xml", owner, ""); res.status != http.StatusBadRequest {
		t.Errorf("format=xml: %d %s, want 400", res.status, res.body)
	}
}

// TestReviewFixWithANewItem: the item a merchant writes for a group (a drafted answer, edited) is saved with the
// fix in one request: the item is added, the group leaves the queue, and its next ask is answered from the item.
// A bad item, or an item both named and written, changes nothing.
func TestReviewFixWithANewItem(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	if res := e.startFor("alpha", "v1", `{"message": "Can I pay with a voucher code?", "conversation_id": "c1"}`); res.status != http.StatusOK || res.json(t)["answered"] != false {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	queue := e.review(owner)
	if len(queue) != 1 {
		t.Fatalf("the queue is %+v, want one group", queue)
	}
	keys, _ := json.Marshal([]string{queue[0].Questions[0].Question})
	for name, body := range map[string]string{
		"an item without content":      `{"questions": ` + string(keys) + `, "knowledge": {"title": "Vouchers"}}`,
		"an item named and written":    `{"questions": ` + string(keys) + `, "knowledge_id": "kn_x", "knowledge": {"title": "Vouchers", "content": "c"}}`,
		"a written item, no questions": `{"questions": [], "knowledge": {"title": "Vouchers", "content": "c"}}`,
	} {
		if res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, body); res.status != http.StatusUnprocessableEntity || res.errorCode(t) != codeValidationFailed {
			t.Errorf("%s: %d %s, want 422", name, res.status, res.body)
		}
	}
	if res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, `{"questions": `+string(keys)+`, "knowledge": {"title": 1}}`); res.status != http.StatusBadRequest || res.errorCode(t) != codeInvalidRequest {
		t.Errorf("a title of the wrong type: %d %s, want 400", res.status, res.body)
	}
	if list := e.do(http.MethodGet, "/api/v1/knowledge", owner, "").json(t)["data"].([]any); len(list) != 0 || len(e.review(owner)) != 1 {
		t.Fatalf("a refused fix changed something: items %v, queue %+v", list, e.review(owner))
	}

	res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, `{"questions": `+string(keys)+`, "knowledge": {"title": "Vouchers",
		"content": "Yes: enter the voucher code at checkout, and its amount is taken off the order.", "questions": ["Can I pay with a voucher code?"]}}`)
	if res.status != http.StatusOK {
		t.Fatalf("fixing with a new item: %d %s", res.status, res.body)
	}
	item, _ := res.json(t)["knowledge"].(map[string]any)
	if item == nil || item["title"] != "Vouchers" {
		t.Fatalf("the fix answered no item: %s", res.body)
	}
	if got := e.do(http.MethodGet, "/api/v1/knowledge/"+item["id"].(string), owner, ""); got.status != http.StatusOK {
		t.Errorf("the new item: %d %s", got.status, got.body)
	}
	if queue := e.review(owner); len(queue) != 0 {
		t.Errorf("after the fix the queue is %+v, want it empty", queue)
	}
	e.clock.Advance(time.Second)
	again := e.startFor("alpha", "v2", `{"message": "Can I pay with a voucher code?", "conversation_id": "c2"}`).json(t)
	if sources, _ := again["sources"].([]any); again["answered"] != true || len(sources) == 0 || sources[0].(map[string]any)["knowledge_id"] != item["id"] {
		t.Errorf("asked again after the fix: %v", again)
	}
}

// A fix is one write: the item it adds or changes and the group it takes out of the queue are written together,
// or, when a part is refused (here the question it lists, past the item's questions or the plan's characters,
// the latter found inside the transaction), nothing is, alike on both stores.
func TestReviewFixWritesAllOrNothing(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.KnowledgeCharacters = 100 })
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		const asked = "Can I pay with a voucher code?" // 30 characters listed
		if res := e.startFor("alpha", "v1", `{"message": "`+asked+`", "conversation_id": "c1"}`); res.status != http.StatusOK {
			t.Fatalf("chat: %d %s", res.status, res.body)
		}
		queue := e.review(owner)
		if len(queue) != 1 {
			t.Fatalf("the queue is %+v, want one group", queue)
		}
		keys, _ := json.Marshal([]string{queue[0].Questions[0].Question})
		content := strings.Repeat("v", 80) // 88 characters with the title "Vouchers"
		twenty, _ := json.Marshal(slices.Collect(func(yield func(string) bool) {
			for i := range chat.MaxQuestions {
				yield(fmt.Sprintf("q%d", i))
			}
		}))
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
			withItem   bool // ITEM in body names an item of content added first
		}{
			{"a new item the listed question takes past the plan's characters",
				`{"questions": ` + string(keys) + `, "list_question": "` + asked + `", "knowledge": {"title": "Vouchers", "content": "` + content[:70] + `"}}`,
				http.StatusForbidden, codeKnowledgeLimit, false},
			{"a new item that cannot list one more question",
				`{"questions": ` + string(keys) + `, "list_question": "` + asked + `", "knowledge": {"title": "Vouchers", "content": "c", "questions": ` + string(twenty) + `}}`,
				http.StatusUnprocessableEntity, codeValidationFailed, false},
			{"an item the listed question takes past the plan's characters",
				`{"questions": ` + string(keys) + `, "list_question": "` + asked + `", "knowledge_id": "ITEM"}`,
				http.StatusForbidden, codeKnowledgeLimit, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.withItem {
					res := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title": "Vouchers", "content": "`+content+`"}`)
					if res.status != http.StatusCreated {
						t.Fatalf("an item: %d %s", res.status, res.body)
					}
					id := res.json(t)["id"].(string)
					tc.body = strings.Replace(tc.body, "ITEM", id, 1)
					t.Cleanup(func() { e.do(http.MethodDelete, "/api/v1/knowledge/"+id, owner, "") })
				}
				before := e.do(http.MethodGet, "/api/v1/knowledge", owner, "").json(t)["data"].([]any)
				if res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, tc.body); res.status != tc.status || res.errorCode(t) != tc.code {
					t.Errorf("%d %s, want %d %s", res.status, res.body, tc.status, tc.code)
				}
				if after := e.do(http.MethodGet, "/api/v1/knowledge", owner, "").json(t)["data"].([]any); !reflect.DeepEqual(after, before) {
					t.Errorf("the refused fix changed the knowledge base: %v, was %v", after, before)
				}
				if queue := e.review(owner); len(queue) != 1 {
					t.Errorf("the refused fix changed the queue: %+v", queue)
				}
			})
		}
	})
}

type reviewGroup struct {
	Question  string
	Questions []struct {
		Question string
		Count    int
	}
	Asked, Unanswered int
	ThumbsDown        int `json:"thumbs_down"`
	Answer            string
	Sources           []any
	Comments          []string
}

// review reads the owner's review queue.
func (e *env) review(owner map[string]string) []reviewGroup {
	e.t.Helper()
	res := e.do(http.MethodGet, "/api/v1/review", owner, "")
	if res.status != http.StatusOK {
		e.t.Fatalf("review: %d %s", res.status, res.body)
	}
	var out struct{ Data []reviewGroup }
	if err := json.Unmarshal(res.body, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Data
}
