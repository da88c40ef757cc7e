// Package strtab finds strings in a list by hashing, in a quarter of the memory of a map from each string to its
// position.
package strtab

import "hash/maphash"

// Table finds strings in a list by hashing: it is a map[string]int32 from each string of the list to its
// position, in a quarter of a map's memory, because its slots hold positions, not strings. An index keeps two
// (its words and its stems) for as long as it lives and builds them anew for each knowledge revision, so their
// size and the garbage of their growth are much of an index's.
type Table struct {
	seed maphash.Seed
	// slots holds positions in the list plus one, 0 in an empty slot; its length is a power of two, and at most
	// half of them are used, so that probes stay short.
	slots []int32
}

// New returns an empty table.
func New() Table { return Table{seed: maphash.MakeSeed()} }

// Find returns the position of s in list, which the table indexes.
func (t *Table) Find(list []string, s string) (int32, bool) {
	if len(t.slots) == 0 {
		return -1, false
	}
	mask := uint64(len(t.slots) - 1) //nolint:gosec // a length, not negative
	for i := maphash.String(t.seed, s) & mask; ; i = (i + 1) & mask {
		p := t.slots[i]
		if p == 0 {
			return -1, false
		}
		if list[p-1] == s {
			return p - 1, true
		}
	}
}

// Added indexes the last string of list, which the table must not hold yet.
func (t *Table) Added(list []string) {
	if 2*len(list) <= len(t.slots) {
		t.put(list, len(list)-1)
		return
	}
	t.slots = make([]int32, max(16, len(t.slots)*2))
	for p := range list {
		t.put(list, p)
	}
}

// put puts the position p of list in the first free slot from the hash of its string.
func (t *Table) put(list []string, p int) {
	mask := uint64(len(t.slots) - 1) //nolint:gosec // a length, not negative
	i := maphash.String(t.seed, list[p]) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = int32(p + 1) //nolint:gosec // a knowledge base has far fewer than 2^31 distinct words
}

// Slots returns how many slots the table has, for estimating its memory: four bytes each.
func (t *Table) Slots() int { return len(t.slots) }
