package fakeopenai

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/embeddings"
)

// TestOneBaseURLServesBoth checks that the embeddings client and a chat completions request reach their fakes
// through the one base URL, and that Embed gives the vectors the server answers.
func TestOneBaseURLServesBoth(t *testing.T) {
	s := New(t, "Hello")
	c, err := embeddings.New(embeddings.Config{BaseURL: s.URL(), Model: "e", Dimensions: 64})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"gift cards by email", "returns within thirty days"}
	res, err := c.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range s.Embed.Embed(texts, 64) {
		for j := range want {
			if res.Vectors[i][j] != want[j] {
				t.Fatalf("text %d, value %d: served %g, Embed %g", i, j, res.Vectors[i][j], want[j])
			}
		}
	}

	resp, err := http.Post(s.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"content":"Hello"`) {
		t.Fatalf("chat completions: %d %s", resp.StatusCode, body)
	}
	if n, m := len(s.Embed.Requests()), len(s.Chat.Requests()); n != 1 || m != 1 {
		t.Fatalf("the fakes recorded %d embedding and %d chat requests, want 1 and 1", n, m)
	}
}
