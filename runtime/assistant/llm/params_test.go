package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"
)

// apiError is the error openai-go returns for a response of status with the error object body.
func apiError(t *testing.T, status int, body string) error {
	t.Helper()
	var wrapped struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &wrapped); err != nil {
		t.Fatal(err)
	}
	e := &openai.Error{StatusCode: status}
	if err := e.UnmarshalJSON(wrapped.Error); err != nil {
		t.Fatal(err)
	}
	return fmt.Errorf("the chat completion: %w", e)
}

func TestARefusedParameterIsCorrectedOnce(t *testing.T) {
	all := wire{completionTokens: true, defaultTemperature: true, noStreamUsage: true}
	for _, tc := range []struct {
		name   string
		from   wire
		status int
		body   string
		want   wire
		retry  bool
	}{
		{"max_tokens refused", wire{}, 400, openAIRefusesMaxTokens, wire{completionTokens: true}, true},
		{"temperature refused", wire{completionTokens: true}, 400, openAIRefusesTemperature, wire{completionTokens: true, defaultTemperature: true}, true},
		{"stream_options refused by Azure", wire{}, 400, azureRefusesStreamOptions, wire{noStreamUsage: true}, true},
		{"include_usage refused by name", wire{}, 400,
			`{"error":{"message":"Unsupported parameter","type":"invalid_request_error","param":"stream_options.include_usage","code":"unsupported_parameter"}}`,
			wire{noStreamUsage: true}, true},
		// A refusal already corrected is the server refusing something else: asking again would loop.
		{"refused again", all, 400, openAIRefusesMaxTokens, all, false},
		{"another parameter", wire{}, 400, `{"error":{"message":"Invalid value for 'messages'","type":"invalid_request_error","param":"messages","code":null}}`, wire{}, false},
		{"not a 400", wire{}, 500, openAIRefusesMaxTokens, wire{}, false},
		{"a refusal of the key", wire{}, 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, wire{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, retry := corrected(tc.from, apiError(t, tc.status, tc.body))
			if got != tc.want || retry != tc.retry {
				t.Errorf("corrected = %+v, %v; want %+v, %v", got, retry, tc.want, tc.retry)
			}
		})
	}
	if _, retry := corrected(wire{}, errors.New("connection refused")); retry {
		t.Error("a network error is retried")
	}
	if _, retry := corrected(wire{}, nil); retry {
		t.Error("a success is retried")
	}
}

func TestTheParametersFollowWhatTheModelAccepts(t *testing.T) {
	for _, tc := range []struct {
		w                                     wire
		maxTokens, completion, temp, usageOpt bool
	}{
		{wire{}, true, false, true, true},
		{wire{completionTokens: true, defaultTemperature: true}, false, true, false, true},
		{wire{noStreamUsage: true}, true, false, true, false},
	} {
		p := tc.w.params("m", nil, 0.2, 300)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var sent map[string]any
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Fatal(err)
		}
		_, maxTokens := sent[paramMaxTokens]
		_, completion := sent[paramMaxCompletionTokens]
		_, temp := sent[paramTemperature]
		_, usageOpt := sent[paramStreamOptions]
		if maxTokens != tc.maxTokens || completion != tc.completion || temp != tc.temp || usageOpt != tc.usageOpt {
			t.Errorf("%+v sends %s", tc.w, b)
		}
	}
}

func TestWhatIsLearnedIsKeptPerModelAndOnlyAdded(t *testing.T) {
	l := newLearned(wire{defaultTemperature: true})
	l.learn("o4-mini", wire{completionTokens: true})
	// An answer asked before the first refusal was learned reports only its own.
	l.learn("o4-mini", wire{noStreamUsage: true})
	if got := l.get("o4-mini"); got != (wire{completionTokens: true, defaultTemperature: true, noStreamUsage: true}) {
		t.Errorf("o4-mini: %+v", got)
	}
	if got := l.get("gpt-4o-mini"); got != (wire{defaultTemperature: true}) {
		t.Errorf("another model: %+v", got)
	}
}
