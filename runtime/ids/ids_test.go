package ids

import (
	"strings"
	"testing"
	"time"
)

func TestNewSortsByTimeAndIsUnique(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for i := range 2000 {
		if i%500 == 0 {
			time.Sleep(2 * time.Millisecond) // cross millisecond boundaries
		}
		id := New("conv_")
		if len(id) != len("conv_")+20 || !strings.HasPrefix(id, "conv_") {
			t.Fatalf("malformed id %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		// Within one millisecond the order is random; across milliseconds it follows time.
		if prev != "" && id[:5+9] < prev[:5+9] {
			t.Fatalf("%q sorts before the earlier %q", id, prev)
		}
		prev = id
	}
}
