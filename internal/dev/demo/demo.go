// Package demo holds the knowledge base of Acme Outdoor, a fictional shop: the demo merchant of `parley dev`
// and the fixture the retrieval assistant's accuracy is measured on.
package demo

import (
	_ "embed"
	"encoding/json"
)

//go:embed knowledge.json
var knowledgeJSON []byte

// Item is one knowledge base item of the demo shop.
type Item struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Content string   `json:"content"`
	URL     string   `json:"url"`
	Tags    []string `json:"tags"`
}

// Knowledge returns the demo shop's knowledge base.
func Knowledge() []Item {
	var items []Item
	if err := json.Unmarshal(knowledgeJSON, &items); err != nil {
		panic("the embedded demo knowledge base is not valid JSON: " + err.Error()) // caught by its test
	}
	return items
}
