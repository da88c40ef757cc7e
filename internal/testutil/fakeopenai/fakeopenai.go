// Package fakeopenai is one OpenAI-compatible server for tests of a runtime that both answers with a model and
// searches by meaning: fakellm's chat completions and fakeembed's embeddings behind one base URL, as OpenAI,
// Azure, Ollama and vLLM serve both, so that --openai-base-url reaches the two.
package fakeopenai

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/fakeembed"
	"github.com/parley-dev/parley/internal/testutil/fakellm"
)

// Server routes /v1/chat/completions to Chat and /v1/embeddings to Embed; each records what it is sent and
// keeps its own knobs.
type Server struct {
	Chat  *fakellm.Provider
	Embed *fakeembed.Provider
	srv   *httptest.Server
}

// New starts a server whose model answers with the pieces of answer, closed when the test ends.
func New(t testing.TB, answer ...string) *Server {
	t.Helper()
	s := Start(answer...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server whose model answers with the pieces of answer, for a TestMain that starts it before its
// tests, until Close.
func Start(answer ...string) *Server {
	s := &Server{Chat: fakellm.Start(answer...), Embed: fakeembed.Start()}
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", s.Chat)
	mux.Handle("/v1/embeddings", s.Embed)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.srv.Close()
	s.Chat.Close()
	s.Embed.Close()
}

// URL is the base URL to configure, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }
