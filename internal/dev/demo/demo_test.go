package demo

import "testing"

func TestKnowledge(t *testing.T) {
	items := Knowledge()
	if len(items) < 40 {
		t.Fatalf("the demo knowledge base has %d items; at least 40 are expected", len(items))
	}
	seen := map[string]bool{}
	for _, it := range items {
		if it.ID == "" || it.Title == "" || it.Content == "" || seen[it.ID] {
			t.Errorf("item %q is incomplete or duplicated", it.ID)
		}
		seen[it.ID] = true
	}
}
