package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
)

const testKey = "sk-test-secret-0123456789"

var shopItems = []assistant.Item{
	{ID: "kn_ship", Title: "Shipping to Canada", URL: "https://shop.example/shipping",
		Content:   "We ship to Canada with Canada Post. Delivery to Canada takes 5 to 8 business days.",
		Questions: []string{"How long to Toronto?", "Do you deliver to Canada?"}},
	{ID: "kn_returns", Title: "Returns", Content: "You can return any item within 30 days for a full refund."},
	{ID: "kn_rent", Title: "Bike rentals", Content: "Rent a bike from 20 euros a day at our Berlin store."},
}

type harness struct {
	r    *Responder
	reg  *prometheus.Registry
	logs *bytes.Buffer
}

func newResponder(t *testing.T, baseURL string, timeout time.Duration, configure ...func(*Config)) harness {
	t.Helper()
	h := harness{reg: prometheus.NewRegistry(), logs: &bytes.Buffer{}}
	cfg := Config{BaseURL: baseURL, Model: "test-model", APIKey: testKey, Timeout: timeout, Temperature: 0.2,
		MaxTokens: 300, ContextItems: 3, HistoryTokens: 200, Offline: assistant.Retrieval{},
		Logger: slog.New(slog.NewTextHandler(h.logs, nil)), Registry: h.reg}
	for _, c := range configure {
		c(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.r = r
	return h
}

func question(msg string, history ...assistant.Turn) assistant.Request {
	return assistant.Request{Message: msg, Index: assistant.NewIndex(shopItems), Instructions: "Speak like a pirate.",
		FallbackMessage: "Ask our team at help@shop.example.", Locale: "de-AT", History: history}
}

func TestTheRequestCarriesContextHistoryKeyAndModel(t *testing.T) {
	f := fakellm.New(t, "We ship ", "to Canada [1].")
	h := newResponder(t, f.URL(), 5*time.Second)
	history := []assistant.Turn{
		{Visitor: true, Text: "Do you ship to Canada?"},
		{Visitor: false, Text: "Yes, with Canada Post."},
	}
	if _, err := h.r.Respond(context.Background(), question("and how long does it take?", history...)); err != nil {
		t.Fatal(err)
	}
	got := f.Last(t)
	if got.Auth != "Bearer "+testKey {
		t.Errorf("Authorization %q", got.Auth)
	}
	b := got.Body
	if b.Model != "test-model" || !b.Stream || !b.StreamOptions.IncludeUsage || b.MaxTokens != 300 || b.Temperature != 0.2 {
		t.Errorf("request %+v", b)
	}
	roles := []string{}
	for _, m := range b.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" {
		t.Fatalf("roles %v", roles)
	}
	sys := b.Messages[0].Content
	for _, want := range []string{"Speak like a pirate.", "de-AT", "[1] Shipping to Canada (https://shop.example/shipping)",
		"Answers questions such as: How long to Toronto? / Do you deliver to Canada?", "5 to 8 business days", noAnswer,
		"square brackets"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if b.Messages[1].Content != "Do you ship to Canada?" || b.Messages[3].Content != "and how long does it take?" {
		t.Errorf("turns %+v", b.Messages[1:])
	}
}

func TestHistoryIsBoundedByTheTokenBudget(t *testing.T) {
	long := strings.Repeat("word ", 400) // about 500 tokens, over the budget of 200
	history := []assistant.Turn{{Visitor: true, Text: long}, {Visitor: false, Text: "short answer"},
		{Visitor: true, Text: "Do you ship to Canada?"}, {Visitor: false, Text: "Yes."}}
	got := recent(history, 200)
	if len(got) != 3 || got[0].Text != "short answer" {
		t.Errorf("recent = %+v", got)
	}
	if len(recent(history, 0)) != 0 {
		t.Error("a zero budget keeps turns")
	}
}

func TestCitationsBecomeSources(t *testing.T) {
	f := fakellm.New(t, "Returns are free within 30 days [2]", ", and Canada gets 5 to 8 days [1][2].")
	h := newResponder(t, f.URL(), 5*time.Second)
	reply, err := h.r.Respond(context.Background(), question("returns and shipping to Canada"))
	if err != nil {
		t.Fatal(err)
	}
	if !reply.Answered || reply.Kind != assistant.KindAnswer || reply.Text != "Returns are free within 30 days [1], and Canada gets 5 to 8 days [2][1]." {
		t.Fatalf("reply %+v", reply)
	}
	// The context's order is the index's; the sources follow the order of first citation, and the markers are
	// renumbered to match them.
	hits := question("returns and shipping to Canada").Index.Search("returns and shipping to Canada", 3)
	if len(reply.Sources) != 2 || reply.Sources[0].KnowledgeID != hits[1].Item.ID || reply.Sources[1].KnowledgeID != hits[0].Item.ID {
		t.Errorf("sources %+v, hits %v %v", reply.Sources, hits[0].Item.ID, hits[1].Item.ID)
	}
	if reply.Usage != (assistant.Usage{PromptTokens: 100, CompletionTokens: 20}) {
		t.Errorf("usage %+v", reply.Usage)
	}
}

func TestAnAnswerCitingNothingHasTheTopItemsAsSources(t *testing.T) {
	f := fakellm.New(t, "Canada Post brings it.")
	h := newResponder(t, f.URL(), 5*time.Second)
	reply, err := h.r.Respond(context.Background(), question("shipping to Canada"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Sources) == 0 || reply.Sources[0].KnowledgeID != "kn_ship" {
		t.Errorf("sources %+v", reply.Sources)
	}
}

func TestARefusalIsTheFallbackCountedUnanswered(t *testing.T) {
	f := fakellm.New(t, "NO_", "ANSWER")
	h := newResponder(t, f.URL(), 5*time.Second)
	reply, err := h.r.Respond(context.Background(), question("do you sell cars?"))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answered || reply.Kind != assistant.KindFallback || reply.Text != "Ask our team at help@shop.example." || len(reply.Sources) != 0 {
		t.Errorf("reply %+v", reply)
	}
}

// TestARefusalLinksTheNearItems: when the model finds no answer in items the question is about, the fallback links
// them as the offline assistant's does, and is still counted unanswered.
func TestARefusalLinksTheNearItems(t *testing.T) {
	f := fakellm.New(t, "NO_ANSWER")
	h := newResponder(t, f.URL(), 5*time.Second)
	reply, err := h.r.Respond(context.Background(), question("how long does shipping to Canada take?"))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answered || reply.Kind != assistant.KindFallback || reply.Text != "Ask our team at help@shop.example." {
		t.Errorf("reply %+v", reply)
	}
	if len(reply.Sources) == 0 || reply.Sources[0].KnowledgeID != "kn_ship" {
		t.Errorf("sources %+v, want the shipping item first", reply.Sources)
	}
	if reply.Usage != (assistant.Usage{PromptTokens: 100, CompletionTokens: 20}) {
		t.Errorf("usage %+v: the refused answer's tokens were spent", reply.Usage)
	}
}

func TestSmallTalkIsAnsweredWithoutTheModel(t *testing.T) {
	f := fakellm.New(t, "should not be asked")
	h := newResponder(t, f.URL(), 5*time.Second)
	reply, err := h.r.Respond(context.Background(), question("Hello!"))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Kind != assistant.KindGreeting {
		t.Errorf("reply %+v", reply)
	}
	if len(f.Requests()) != 0 {
		t.Error("the model was asked")
	}
}

// TestFailuresGiveTheOfflineAnswerInTime: each way a provider fails gives the retrieval answer, well within the
// timeout plus a margin, counted by reason and logged without the key.
func TestFailuresGiveTheOfflineAnswerInTime(t *testing.T) {
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return "http://" + addr + "/v1"
	}
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		setup  func(f *fakellm.Provider)
		url    func(f *fakellm.Provider) string
		reason string
	}{
		{"500", func(f *fakellm.Provider) { f.Status = http.StatusInternalServerError }, nil, reasonError},
		{"429", func(f *fakellm.Provider) { f.Status = http.StatusTooManyRequests }, nil, reasonError},
		{"timeout", func(f *fakellm.Provider) { f.Delay = 5 * time.Second }, nil, reasonTimeout},
		{"garbage", func(f *fakellm.Provider) { f.Garbage = "data: {not json\n\n" }, nil, reasonError},
		{"empty", func(f *fakellm.Provider) { f.Answer = []string{"  "} }, nil, reasonEmpty},
		// A stream that ends without a finish_reason was cut short, however cleanly its connection closed.
		{"cut short", func(f *fakellm.Provider) { f.Garbage = sseChunk(`{"content":"We ship to Can"}`, "null") }, nil, reasonError},
		// An answer far longer than max_tokens allows is a provider gone wrong: it is not read to the end.
		{"endless", func(f *fakellm.Provider) {
			f.Garbage = strings.Repeat(sseChunk(`{"content":"`+strings.Repeat("x", 4096)+`"}`, "null"), 64)
		}, nil, reasonError},
		// So is endless reasoning: a thought counts against max_tokens as the answer does.
		{"endless reasoning", func(f *fakellm.Provider) {
			f.Garbage = strings.Repeat(sseChunk(`{"reasoning_content":"`+strings.Repeat("x", 4096)+`"}`, "null"), 64) +
				sseChunk(`{"content":"Canada."}`, `"stop"`) + "data: [DONE]\n\n"
		}, nil, reasonError},
		{"connection refused", nil, func(*fakellm.Provider) string { return refused() }, reasonError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakellm.New(t, "unused")
			if tc.setup != nil {
				f.Set(tc.setup)
			}
			url := f.URL()
			if tc.url != nil {
				url = tc.url(f)
			}
			h := newResponder(t, url, timeout)
			start := time.Now()
			reply, err := h.r.Respond(context.Background(), question("How long does delivery to Canada take?"))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > timeout+time.Second {
				t.Errorf("took %v", took)
			}
			want, _ := assistant.Retrieval{}.Respond(context.Background(), question("How long does delivery to Canada take?"))
			if reply.Text != want.Text || !reply.Answered || reply.Sources[0].KnowledgeID != "kn_ship" {
				t.Errorf("reply %+v, want the offline %+v", reply, want)
			}
			if n := testutil.ToFloat64(h.r.offline.WithLabelValues(tc.reason)); n != 1 {
				t.Errorf("offline answers for %s: %v", tc.reason, n)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, "reason="+tc.reason) || strings.Contains(logs, testKey) {
				t.Errorf("logs %s", logs)
			}
		})
	}
}

func TestTheVisitorsCancellationIsAnError(t *testing.T) {
	f := fakellm.New(t, "late")
	f.Set(func(f *fakellm.Provider) { f.Delay = 5 * time.Second })
	h := newResponder(t, f.URL(), 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := h.r.Respond(ctx, question("shipping to Canada")); err == nil {
		t.Fatal("no error")
	}
	if n := testutil.ToFloat64(h.r.offline.WithLabelValues(reasonTimeout)); n != 0 {
		t.Errorf("counted as the provider's timeout: %v", n)
	}
}

func TestPiecesArePassedOnButARefusalIsHeldBack(t *testing.T) {
	for _, tc := range []struct {
		answer []string
		want   string
	}{
		{[]string{"We ship ", "to Canada [1]."}, "We ship to Canada [1]."},
		{[]string{" NO", "_ANS", "WER"}, ""},
	} {
		f := fakellm.New(t, tc.answer...)
		h := newResponder(t, f.URL(), 5*time.Second)
		var got []string
		req := question("shipping to Canada")
		req.Delta = func(p string) { got = append(got, p) }
		reply, err := h.r.Respond(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "") != tc.want || (tc.want != "" && reply.Text != tc.want) {
			t.Errorf("pieces %q, reply %q", got, reply.Text)
		}
	}
}

// sseChunk is one server-sent event of a chat.completion.chunk with the delta and finish_reason given as JSON.
func sseChunk(delta, finish string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` +
		delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
}

// The usage a provider reports is counted within bounds: a negative count or one past any context window would
// make the exchange's tokens invalid and lose it, or overflow the month's total.
func TestUsageIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		prompt, completion     string
		wantPrompt, wantAnswer int64
	}{
		{"as reported", "120", "30", 120, 30},
		{"negative", "-1000000", "-1", 0, 0},
		{"past any context window", "9223372036854775807", "9223372036854775807", maxReportedTokens, maxReportedTokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakellm.New(t, "unused")
			f.Set(func(f *fakellm.Provider) {
				f.Garbage = sseChunk(`{"content":"We ship to Canada in 5 to 8 business days [1]."}`, `"stop"`) +
					`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":` +
					tc.prompt + `,"completion_tokens":` + tc.completion + `,"total_tokens":1}}` + "\n\ndata: [DONE]\n\n"
			})
			h := newResponder(t, f.URL(), time.Second)
			reply, err := h.r.Respond(context.Background(), question("How long does delivery to Canada take?"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(reply.Text, "5 to 8 business days") || reply.Usage.PromptTokens != tc.wantPrompt ||
				reply.Usage.CompletionTokens != tc.wantAnswer {
				t.Errorf("reply %q with usage %+v, want the model's answer with %d and %d", reply.Text, reply.Usage, tc.wantPrompt, tc.wantAnswer)
			}
		})
	}
}

// TestACancelledAnswerStopsTheModelAndSaysWhatItCost: the caller goes away after the first piece; the provider sees
// its request closed, and the error carries the text written and the tokens the provider bills for it (the prompt
// whole, the completion so far), with no offline answer counted as a fallback.
func TestACancelledAnswerStopsTheModelAndSaysWhatItCost(t *testing.T) {
	f := fakellm.New(t, "We ship [1] ", "to Canada ", "in 5 to 8 days [1].")
	f.Set(func(p *fakellm.Provider) { p.PieceDelay = 300 * time.Millisecond })
	h := newResponder(t, f.URL(), 10*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	req := question("Do you ship to Canada?")
	req.Delta = func(string) { cancel() }
	_, err := h.r.Respond(ctx, req)
	var interrupted *assistant.InterruptedError
	if !errors.As(err, &interrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Respond after the caller left: %v; want an *assistant.InterruptedError of context.Canceled", err)
	}
	if p := interrupted.Partial; p.Text != "We ship [1] " || p.Usage.PromptTokens <= 0 || p.Usage.CompletionTokens <= 0 ||
		len(p.Sources) != 1 {
		t.Errorf("the partial answer: %+v; want the first piece, the source it cites and its tokens", p)
	}
	select {
	case <-f.Abandoned():
	case <-time.After(10 * time.Second): // a bound on a stalled peer: the whole answer takes 0.9 s
		t.Fatal("the provider went on writing after the caller left")
	}
	for _, reason := range []string{reasonTimeout, reasonError, reasonEmpty} {
		if got := testutil.ToFloat64(h.r.offline.WithLabelValues(reason)); got != 0 {
			t.Errorf("offline answers counted for %s: %v; want none, the caller went away", reason, got)
		}
	}
}

// The model is told to answer in the visitor's language, and which it is when the message does not say.
func TestThePromptNamesTheVisitorsLanguage(t *testing.T) {
	f := fakellm.New(t, "Cinq à huit jours [1].")
	h := newResponder(t, f.URL(), 5*time.Second)
	req := question("Canada?")
	req.Language = "fr-CA"
	if _, err := h.r.Respond(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	sys := f.Last(t).Body.Messages[0].Content
	for _, want := range []string{"Answer in the language the visitor writes in", "The visitor's chat is in fr-CA"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "de-AT") {
		t.Errorf("the site's language is given as well as the visitor's:\n%s", sys)
	}
}

// A prompt longer than the model's context window, less the answer's tokens, loses the conversation's oldest turns
// first, then its least relevant items, and each cut is counted; the citations number the items left.
func TestThePromptIsCutToTheContextWindow(t *testing.T) {
	history := []assistant.Turn{
		{Visitor: true, Text: strings.Repeat("Do you ship to Canada and to the moon? ", 10)},
		{Visitor: false, Text: strings.Repeat("Yes, to Canada with Canada Post. ", 10)},
	}
	req := question("How long does delivery to Canada take, and can I return it?", history...)
	hits := req.Index.Search(retrievalQuery(req), 3)
	if len(hits) < 2 {
		t.Fatalf("%d hits: the test needs items to cut", len(hits))
	}
	// Room for the rules and the first item alone.
	window := 300 + int(newCounter().usage(prompt(req, hits[:1], nil), "").PromptTokens) + 5
	for _, tc := range []struct {
		name          string
		window        int
		items, turns  int
		history, cuts float64
	}{
		{"no window", 0, len(hits), 2, 0, 0},
		{"a large window", 100_000, len(hits), 2, 0, 0},
		{"a small window", window, 1, 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakellm.New(t, "Five to eight days [1].")
			h := newResponder(t, f.URL(), 5*time.Second, func(c *Config) { c.ContextWindow = tc.window })
			reply, err := h.r.Respond(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			msgs := f.Last(t).Body.Messages
			sys := msgs[0].Content
			items := 0
			for i := 1; strings.Contains(sys, fmt.Sprintf("\n[%d] ", i)); i++ {
				items++
			}
			if items != tc.items || len(msgs) != tc.turns+2 {
				t.Errorf("%d items and %d turns sent, want %d and %d", items, len(msgs)-2, tc.items, tc.turns)
			}
			if len(reply.Sources) != 1 || reply.Sources[0].KnowledgeID != hits[0].Item.ID {
				t.Errorf("sources %+v, want the first item", reply.Sources)
			}
			for part, want := range map[string]float64{cutHistory: tc.history, cutItems: tc.cuts} {
				if got := testutil.ToFloat64(h.r.cuts.WithLabelValues(part)); got != want {
					t.Errorf("cuts of %s: %v, want %v", part, got, want)
				}
			}
		})
	}
}

// TestACuratedAnswerIsGivenAsWrittenWithoutTheModel: a question a curated item answers gets the item's text as the
// merchant wrote it, with no request to the model (no tokens, no rewording); another question still goes to the
// model, and its answer carries the retriever's confidence in the items it was given.
func TestACuratedAnswerIsGivenAsWrittenWithoutTheModel(t *testing.T) {
	f := fakellm.New(t, "You can return it within 30 days [1].")
	h := newResponder(t, f.URL(), 5*time.Second)
	items := slices.Clone(shopItems)
	items[0].Curated = true
	req := question("How long to Toronto?")
	req.Index = assistant.NewIndex(items)
	reply, err := h.r.Respond(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != items[0].Content || !reply.Answered || reply.Usage != (assistant.Usage{}) || reply.Confidence != 1 ||
		len(reply.Sources) != 1 || reply.Sources[0].KnowledgeID != "kn_ship" {
		t.Errorf("reply %+v; want the curated text as written", reply)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for a curated answer", n)
	}
	req.Message = "Can I return my order?"
	reply, err = h.r.Respond(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Requests()) != 1 || reply.Text == items[0].Content || !reply.Answered || reply.Confidence <= 0 || reply.Confidence > 1 {
		t.Errorf("another question: reply %+v after %d requests", reply, len(f.Requests()))
	}
}

// A model slow to start its answer, or stalled midway, gives the offline answer at its own timeout, counted by
// which timeout tripped. The timeout under test is short and the other long, and the model's wait is far longer
// than both, so that a loaded machine's scheduling delays cannot trip the wrong one or let the model answer.
func TestASlowOrStalledModelGivesTheOfflineAnswer(t *testing.T) {
	const short, long, never, overall = 300 * time.Millisecond, 3 * time.Second, time.Minute, 10 * time.Second
	for _, tc := range []struct {
		name        string
		setup       func(f *fakellm.Provider)
		first, idle time.Duration
		reason      string
	}{
		{"slow first token", func(f *fakellm.Provider) { f.Delay = never }, short, long, reasonFirstToken},
		// The role chunk comes at once, as vLLM sends it; the text is what counts.
		{"slow first text", func(f *fakellm.Provider) { f.PieceDelay = never }, short, long, reasonFirstToken},
		{"stalled", func(f *fakellm.Provider) { f.Stall = never }, long, short, reasonIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakellm.New(t, "We ship ", "to Canada ", "in 5 to 8 ", "business ", "days [1].")
			f.Set(tc.setup)
			h := newResponder(t, f.URL(), overall, func(c *Config) { c.FirstTokenTimeout, c.IdleTimeout = tc.first, tc.idle })
			start := time.Now()
			reply, err := h.r.Respond(context.Background(), question("How long does delivery to Canada take?"))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took >= long {
				t.Errorf("the offline answer took %s, past the timeout not under test", took)
			}
			want, _ := assistant.Retrieval{}.Respond(context.Background(), question("How long does delivery to Canada take?"))
			if reply.Text != want.Text {
				t.Errorf("reply %q, want the offline %q", reply.Text, want.Text)
			}
			if n := testutil.ToFloat64(h.r.offline.WithLabelValues(tc.reason)); n != 1 {
				t.Errorf("offline answers for %s: %v", tc.reason, n)
			}
			if !strings.Contains(h.logs.String(), "reason="+tc.reason) {
				t.Errorf("logs %s", h.logs)
			}
		})
	}
}

// A model that answers slowly but steadily is waited for: the timeouts bound the wait for the first text and the
// gaps between pieces, not the answer, which takes longer than either. The gaps are a twentieth of the timeouts, so
// that a loaded machine's scheduling delays stay far from them.
func TestASlowButSteadyModelIsWaitedFor(t *testing.T) {
	const gap, timeout, pieces = 100 * time.Millisecond, 2 * time.Second, 25
	answer := make([]string, pieces)
	for i := range answer {
		answer[i] = fmt.Sprintf("w%d ", i)
	}
	f := fakellm.New(t, answer...)
	f.Set(func(f *fakellm.Provider) { f.PieceDelay = gap })
	h := newResponder(t, f.URL(), 4*pieces*gap, func(c *Config) { c.FirstTokenTimeout, c.IdleTimeout = timeout, timeout })
	start := time.Now()
	reply, err := h.r.Respond(context.Background(), question("How long does delivery to Canada take?"))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); reply.Text != strings.TrimSpace(strings.Join(answer, "")) || took < pieces*gap {
		t.Errorf("a steady model's answer %q after %s", reply.Text, took)
	}
	for _, reason := range []string{reasonFirstToken, reasonIdle} {
		if n := testutil.ToFloat64(h.r.offline.WithLabelValues(reason)); n != 0 {
			t.Errorf("offline answers for %s: %v", reason, n)
		}
	}
}

// Each request is answered by the model its merchant's plan names, on that provider's server, with the
// merchant's own key where it has one; a request naming no provider by the default one.
func TestEachRequestIsAnsweredByItsProvidersModel(t *testing.T) {
	def, small, azure := fakellm.New(t, "From the default."), fakellm.New(t, "From the small model."), fakellm.New(t, "From Azure.")
	h := newResponder(t, def.URL(), 5*time.Second, func(c *Config) {
		c.Providers = []Provider{
			{Name: "small", BaseURL: small.URL(), APIKey: "sk-small-platform", Models: []Model{
				{Name: "llama3.2:1b", MaxTokens: 100, Temperature: 0.5, Timeouts: Timeouts{Overall: 5 * time.Second}},
				{Name: "llama3.2:3b", MaxTokens: 200, OmitTemperature: true, MaxCompletionTokens: true, Timeouts: Timeouts{Overall: 5 * time.Second}},
			}},
			{Name: "azure", BaseURL: azure.AzureEndpoint(), AzureAPIVersion: "2024-10-21", APIKey: "azure-platform", Models: []Model{
				{Name: "gpt-4o-deployment", MaxTokens: 300, Timeouts: Timeouts{Overall: 5 * time.Second}}}},
		}
	})
	ask := func(provider, model, key string) string {
		t.Helper()
		req := question("How long does delivery to Canada take?")
		req.Provider, req.Model, req.APIKey = provider, model, key
		reply, err := h.r.Respond(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return reply.Text
	}
	if got := ask("", "", ""); got != "From the default." || def.Last(t).Body.Model != "test-model" || def.Last(t).Auth != "Bearer "+testKey {
		t.Errorf("the default provider: %q, %+v", got, def.Last(t))
	}
	if got := ask("small", "", ""); got != "From the small model." {
		t.Errorf("the small provider's first model: %q", got)
	}
	if r := small.Last(t); r.Body.Model != "llama3.2:1b" || r.Body.MaxTokens != 100 || r.Body.Temperature != 0.5 || r.Auth != "Bearer sk-small-platform" {
		t.Errorf("the small provider's first model was asked %+v", r)
	}
	if got := ask("small", "llama3.2:3b", "sk-merchant-own"); got != "From the small model." {
		t.Errorf("the small provider's second model: %q", got)
	}
	if r := small.Last(t); r.Body.Model != "llama3.2:3b" || r.Auth != "Bearer sk-merchant-own" ||
		!slices.Contains(r.Params, paramMaxCompletionTokens) || slices.Contains(r.Params, paramTemperature) {
		t.Errorf("the second model, with the merchant's key, was asked %+v", r)
	}
	if got := ask("azure", "", "azure-merchant-own"); got != "From Azure." {
		t.Errorf("the Azure provider: %q", got)
	}
	if r := azure.Last(t); r.APIKey != "azure-merchant-own" || r.Auth != "" ||
		!strings.HasPrefix(r.Path, "/openai/deployments/gpt-4o-deployment/chat/completions?api-version=2024-10-21") {
		t.Errorf("the Azure provider, with the merchant's key, was asked %+v", r)
	}
	// A bundle naming what the runtime does not declare (a ChatRuntime changed before its bundles) is answered
	// offline, counted, and sent nowhere.
	before := len(def.Requests()) + len(small.Requests()) + len(azure.Requests())
	want, _ := assistant.Retrieval{}.Respond(context.Background(), question("How long does delivery to Canada take?"))
	for _, named := range [][2]string{{"large", ""}, {"small", "gpt-5"}} {
		if got := ask(named[0], named[1], "sk-merchant-own"); got != want.Text {
			t.Errorf("%v: %q, want the offline answer", named, got)
		}
	}
	if n := testutil.ToFloat64(h.r.offline.WithLabelValues(reasonUnknownModel)); n != 2 {
		t.Errorf("offline answers for an unknown model: %v", n)
	}
	if after := len(def.Requests()) + len(small.Requests()) + len(azure.Requests()); after != before {
		t.Errorf("an unknown model's request reached a provider")
	}
	if logs := h.logs.String(); strings.Contains(logs, "sk-merchant-own") || strings.Contains(logs, "sk-small-platform") {
		t.Errorf("a key is in the logs: %s", logs)
	}
}
