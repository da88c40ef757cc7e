// Package apiclient sends requests to a runtime's REST interface for tests that run the runtime as a server or a
// process, so that each such test speaks to /api/v1 the same way a merchant's backend does.
package apiclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Response is the runtime's answer to one request.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header is the answer's header.
	Header http.Header
	// Body is the whole answer body.
	Body string
}

// Post sends body, a JSON document, to url with the headers and reads the whole answer.
func Post(ctx context.Context, url string, headers map[string]string, body string) (Response, error) {
	return send(ctx, http.MethodPost, url, headers, strings.NewReader(body))
}

// Get asks for url with the headers and reads the whole answer.
func Get(ctx context.Context, url string, headers map[string]string) (Response, error) {
	return send(ctx, http.MethodGet, url, headers, nil)
}

// send sends a request, a JSON document its body unless nil, and reads the whole answer.
func send(ctx context.Context, method, url string, headers map[string]string, body io.Reader) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return Response{}, fmt.Errorf("building %s %s: %w", method, url, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("reading the answer to %s %s: %w", method, url, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: string(answer)}, nil
}

// Chat posts body to base's /api/v1/chat with an API key, as a merchant's backend or widget does, and stops the
// test when the request cannot be made at all; the status is the caller's to check.
func Chat(tb testing.TB, base, key, body string) Response {
	tb.Helper()
	resp, err := Post(tb.Context(), base+"/api/v1/chat", map[string]string{"X-API-Key": key}, body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}
