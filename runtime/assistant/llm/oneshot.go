package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
)

// maxOneShotBytes bounds a chat completion answered in one JSON body, as the stream's own limit bounds an answer.
const maxOneShotBytes = 1 << 20

// streamOneShots is a middleware that reads a chat completion answered in one JSON body, by a server or gateway
// that ignores "stream": true, as the stream of one chunk it stands for: a choice's message has the shape of a
// chunk's delta, so the answer, its reasoning, finish_reason and usage are all read as streamed ones are.
func streamOneShots(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode != http.StatusOK {
		return res, err
	}
	if media, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); media != "application/json" {
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxOneShotBytes+1))
	_ = res.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the chat completion: %w", err)
	}
	if len(body) > maxOneShotBytes {
		return nil, fmt.Errorf("the chat completion is longer than %d bytes", maxOneShotBytes)
	}
	var completion struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Index        int64           `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason *string         `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage,omitempty"`
	}
	if err := json.Unmarshal(body, &completion); err != nil {
		return nil, fmt.Errorf("reading the chat completion: %w", err)
	}
	type choice struct {
		Index        int64           `json:"index"`
		Delta        json.RawMessage `json:"delta"`
		FinishReason *string         `json:"finish_reason"`
	}
	chunk := struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []choice        `json:"choices"`
		Usage   json.RawMessage `json:"usage,omitempty"`
	}{ID: completion.ID, Object: "chat.completion.chunk", Created: completion.Created, Model: completion.Model,
		Choices: []choice{}, Usage: completion.Usage}
	for _, c := range completion.Choices {
		chunk.Choices = append(chunk.Choices, choice{Index: c.Index, Delta: c.Message, FinishReason: c.FinishReason})
	}
	event, err := json.Marshal(chunk)
	if err != nil {
		return nil, fmt.Errorf("reading the chat completion: %w", err)
	}
	var sse bytes.Buffer
	fmt.Fprintf(&sse, "data: %s\n\ndata: [DONE]\n\n", event)
	res.Body = io.NopCloser(&sse)
	res.ContentLength = int64(sse.Len())
	res.Header = res.Header.Clone()
	res.Header.Set("Content-Type", "text/event-stream")
	res.Header.Set("Content-Length", strconv.Itoa(sse.Len()))
	return res, nil
}
