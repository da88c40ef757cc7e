package strtab

import (
	"fmt"
	"testing"
)

// A Table finds every string of its list at its position, through each growth, and nothing else.
func TestTable(t *testing.T) {
	table := New()
	if at, ok := table.Find(nil, "a"); ok {
		t.Fatalf("an empty table finds %q at %d", "a", at)
	}
	var list []string
	for i := range 5000 {
		list = append(list, fmt.Sprint("w", i))
		table.Added(list)
		if 2*len(list) > len(table.slots) {
			t.Fatalf("%d strings in %d slots: more than half full", len(list), len(table.slots))
		}
	}
	for i, s := range list {
		if at, ok := table.Find(list, s); !ok || int(at) != i {
			t.Errorf("find(%q) = %d, %v; want %d, true", s, at, ok, i)
		}
	}
	for _, s := range []string{"", "w", "w5000", "x1", "W1"} {
		if at, ok := table.Find(list, s); ok {
			t.Errorf("find(%q) = %d, true; it is not in the list", s, at)
		}
	}
}
