//go:build integration

package embedserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/embedserver"
)

// response is OpenAI's embeddings response; Embedding stays raw because it is an array or a base64 string.
type response struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// errorBody is OpenAI's error envelope.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func post(t *testing.T, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	return resp.StatusCode, data
}

// embed asks for the vectors of inputs and checks the response's shape.
func embed(t *testing.T, s *embedserver.Server, request map[string]any) ([][]float64, response) {
	t.Helper()
	body, _ := json.Marshal(request)
	status, data := post(t, s.BaseURL+"/embeddings", "", string(body))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, data)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if r.Object != "list" || r.Model != embedserver.Model {
		t.Errorf("object %q model %q, want list and %q", r.Object, r.Model, embedserver.Model)
	}
	if r.Usage.PromptTokens <= 0 || r.Usage.TotalTokens != r.Usage.PromptTokens {
		t.Errorf("usage %+v: want positive prompt_tokens equal to total_tokens", r.Usage)
	}
	vectors := make([][]float64, len(r.Data))
	for i, d := range r.Data {
		if d.Object != "embedding" || d.Index != i {
			t.Errorf("data[%d]: object %q index %d", i, d.Object, d.Index)
		}
		var floats []float64
		if err := json.Unmarshal(d.Embedding, &floats); err != nil {
			var b64 string
			if err := json.Unmarshal(d.Embedding, &b64); err != nil {
				t.Fatalf("data[%d].embedding is neither numbers nor base64: %s", i, d.Embedding)
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(raw)%4 != 0 {
				t.Fatalf("data[%d].embedding: bad base64 of float32s: %v", i, err)
			}
			for j := 0; j < len(raw); j += 4 {
				floats = append(floats, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[j:]))))
			}
		}
		vectors[i] = floats
	}
	return vectors, r
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func cosine(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s / norm(a) / norm(b)
}

func TestProtocol(t *testing.T) {
	s := embedserver.Start(t)

	one, r := embed(t, s, map[string]any{"model": embedserver.Model, "input": "Do you ship to Austria?"})
	if len(one) != 1 || len(one[0]) != embedserver.Dimensions {
		t.Fatalf("a string input: %d vectors of %d, want 1 of %d", len(one), len(one[0]), embedserver.Dimensions)
	}
	if n := norm(one[0]); math.Abs(n-1) > 1e-3 {
		t.Errorf("norm %v, want a unit vector", n)
	}
	single := r.Usage.PromptTokens

	texts := []string{"Gift cards", "Do you ship to Austria?", "Opening hours"}
	many, r := embed(t, s, map[string]any{"model": embedserver.Model, "input": texts})
	if len(many) != len(texts) {
		t.Fatalf("%d vectors for %d inputs", len(many), len(texts))
	}
	if r.Usage.PromptTokens <= single {
		t.Errorf("three inputs counted %d tokens, one of them alone %d", r.Usage.PromptTokens, single)
	}
	// The same text encodes the same in a batch as alone, at its own index.
	if c := cosine(many[1], one[0]); c < 0.9999 {
		t.Errorf("the batch's vector at index 1 is not the lone input's (cosine %v)", c)
	}

	short, _ := embed(t, s, map[string]any{"model": embedserver.Model, "input": texts[1], "dimensions": 64})
	if len(short[0]) != 64 || math.Abs(norm(short[0])-1) > 1e-3 {
		t.Errorf("dimensions 64: %d numbers of norm %v, want 64 of norm 1", len(short[0]), norm(short[0]))
	}
	if c := cosine(short[0], one[0][:64]); c < 0.9999 {
		t.Errorf("dimensions 64 is not the full vector's first 64, scaled (cosine %v)", c)
	}

	packed, _ := embed(t, s, map[string]any{"model": embedserver.Model, "input": texts[1], "encoding_format": "base64"})
	if len(packed[0]) != embedserver.Dimensions || cosine(packed[0], one[0]) < 0.9999 {
		t.Errorf("base64 does not hold the float vector")
	}
}

func TestBadInput(t *testing.T) {
	s := embedserver.Start(t)
	model := `"model":"` + embedserver.Model + `"`
	for _, tc := range []struct {
		name, body string
		status     int
		param      string
		code       string
	}{
		{"not JSON", `{"model":`, 400, "", ""},
		{"not an object", `["a"]`, 400, "", ""},
		{"no model", `{"input":"a"}`, 400, "model", ""},
		{"model not a string", `{"model":7,"input":"a"}`, 400, "model", ""},
		{"another model", `{"model":"text-embedding-3-small","input":"a"}`, 404, "model", "model_not_found"},
		{"no input", `{` + model + `}`, 400, "input", ""},
		{"empty input", `{` + model + `,"input":""}`, 400, "input", ""},
		{"empty list", `{` + model + `,"input":[]}`, 400, "input", ""},
		{"token ids", `{` + model + `,"input":[101,2023]}`, 400, "input", ""},
		{"an empty item", `{` + model + `,"input":["a",""]}`, 400, "input", ""},
		{"input an object", `{` + model + `,"input":{"text":"a"}}`, 400, "input", ""},
		{"dimensions zero", `{` + model + `,"input":"a","dimensions":0}`, 400, "dimensions", ""},
		{"dimensions too many", `{` + model + `,"input":"a","dimensions":513}`, 400, "dimensions", ""},
		{"dimensions a fraction", `{` + model + `,"input":"a","dimensions":1.5}`, 400, "dimensions", ""},
		{"dimensions a string", `{` + model + `,"input":"a","dimensions":"8"}`, 400, "dimensions", ""},
		{"unknown encoding", `{` + model + `,"input":"a","encoding_format":"int8"}`, 400, "encoding_format", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, data := post(t, s.BaseURL+"/embeddings", "", tc.body)
			checkError(t, status, data, tc.status, tc.param, tc.code)
		})
	}

	t.Run("too many inputs", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"model": embedserver.Model, "input": slices.Repeat([]string{"a"}, 2049)})
		status, data := post(t, s.BaseURL+"/embeddings", "", string(body))
		checkError(t, status, data, 400, "input", "")
	})
	t.Run("too large", func(t *testing.T) {
		body := `{` + model + `,"input":"` + strings.Repeat("a", 9<<20) + `"}`
		status, data := post(t, s.BaseURL+"/embeddings", "", body)
		checkError(t, status, data, 413, "", "")
	})
	t.Run("GET", func(t *testing.T) {
		resp, err := http.Get(s.BaseURL + "/embeddings")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		checkError(t, resp.StatusCode, data, 405, "", "method_not_allowed")
		if allow := resp.Header.Get("Allow"); allow != http.MethodPost {
			t.Errorf("Allow %q, want POST", allow)
		}
	})
	t.Run("unknown path", func(t *testing.T) {
		status, data := post(t, s.BaseURL+"/embedding", "", `{`+model+`,"input":"a"}`)
		checkError(t, status, data, 404, "", "unknown_url")
	})
}

func TestAPIKey(t *testing.T) {
	s := embedserver.Start(t, embedserver.Options{APIKey: "sk-test-embeddings"})
	body := `{"model":"` + embedserver.Model + `","input":"a"}`
	for _, key := range []string{"", "sk-another"} {
		status, data := post(t, s.BaseURL+"/embeddings", key, body)
		checkError(t, status, data, 401, "", "invalid_api_key")
		if bytes.Contains(data, []byte("sk-test-embeddings")) {
			t.Errorf("the refusal tells the key: %s", data)
		}
	}
	if status, data := post(t, s.BaseURL+"/embeddings", "sk-test-embeddings", body); status != http.StatusOK {
		t.Errorf("with the key: status %d: %s", status, data)
	}
}

func checkError(t *testing.T, status int, data []byte, wantStatus int, wantParam, wantCode string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("status %d, want %d: %s", status, wantStatus, data)
	}
	var e errorBody
	if err := json.Unmarshal(data, &e); err != nil || e.Error.Message == "" || e.Error.Type != "invalid_request_error" {
		t.Fatalf("not OpenAI's error envelope (%v): %s", err, data)
	}
	if param := deref(e.Error.Param); param != wantParam {
		t.Errorf("param %q, want %q", param, wantParam)
	}
	if code := deref(e.Error.Code); code != wantCode {
		t.Errorf("code %q, want %q", code, wantCode)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestParaphrase is why the server exists: a question that shares no word with its item is nearest to it, which
// the word ranker cannot do.
func TestParaphrase(t *testing.T) {
	s := embedserver.Start(t)
	items := []string{"Gift cards", "Shipping times", "Returns and refunds", "Opening hours", "Payment methods",
		"Size guide", "Track your order", "Cancel an order", "Store locations", "Warranty"}
	for _, tc := range []struct{ question, item string }{
		{"can I buy a voucher as a present?", "Gift cards"},
		{"how long until my parcel arrives?", "Shipping times"},
		{"when are you open?", "Opening hours"},
	} {
		vectors, _ := embed(t, s, map[string]any{"model": embedserver.Model, "input": append([]string{tc.question}, items...)})
		best, bestScore := "", -2.0
		for i, item := range items {
			if c := cosine(vectors[0], vectors[i+1]); c > bestScore {
				best, bestScore = item, c
			}
		}
		if best != tc.item {
			t.Errorf("%q is nearest to %q (%.3f), want %q", tc.question, best, bestScore, tc.item)
		}
	}
}
