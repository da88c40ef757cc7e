package assistant

import (
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// Size returns an estimate of the bytes of heap the index holds: its items' strings, sentences, postings, pair
// lists and maps, as counted by estimateSize when the index was built. It is what a cache of indexes is bounded
// by; a test checks it against the heap's growth when an index is built.
func (ix *Index) Size() int64 {
	if ix == nil {
		return 0
	}
	return ix.size
}

// The sizes of the values the index keeps, for estimateSize.
const (
	stringHeader = int64(unsafe.Sizeof(""))
	sliceHeader  = int64(unsafe.Sizeof([]int32(nil)))
	itemSize     = int64(unsafe.Sizeof(Item{}))
	docSize      = int64(unsafe.Sizeof(doc{}))
	sentenceSize = int64(unsafe.Sizeof(sentence{}))
)

// estimateSize adds up what the index holds, each string and array rounded up as the allocator rounds it.
// A word that is its own stem may share its string with the stem, and is counted twice, which errs on the large
// side; sentences are parts of the items' content and take no bytes of their own. The per-document scratch of searches lives in a
// sync.Pool that the garbage collector empties, and is left out.
func (ix *Index) estimateSize() int64 {
	n := alloc(int64(unsafe.Sizeof(*ix)))
	n += alloc(int64(cap(ix.items)) * itemSize)
	for _, it := range ix.items {
		n += alloc(int64(len(it.ID))) + alloc(int64(len(it.Title))) + alloc(int64(len(it.Content))) +
			alloc(int64(len(it.URL))) + alloc(int64(cap(it.Tags))*stringHeader)
		for _, t := range it.Tags {
			n += alloc(int64(len(t)))
		}
		n += alloc(int64(cap(it.Questions)) * stringHeader)
		for _, q := range it.Questions {
			n += alloc(int64(len(q)))
		}
		if !utf8.ValidString(it.Content) {
			// The sentences share a valid copy, in which each invalid byte takes three.
			n += alloc(int64(len(it.Content)) * 3)
		}
	}
	n += alloc(int64(cap(ix.docs)) * docSize)
	for _, d := range ix.docs {
		// The title's and the sentences' terms share one array; the sentences' text is the item's content.
		refs := len(d.title)
		for _, s := range d.sentences {
			refs += len(s.terms)
		}
		n += alloc(int64(refs)*4) + alloc(int64(cap(d.sentences))*sentenceSize)
	}
	n += alloc(int64(cap(ix.questionOnly)) * sliceHeader)
	for _, ids := range ix.questionOnly {
		n += alloc(int64(cap(ids)) * 4)
	}
	n += alloc(int64(cap(ix.questions)) * sliceHeader)
	for _, qs := range ix.questions {
		n += alloc(int64(cap(qs)) * sliceHeader)
		for _, ids := range qs {
			n += alloc(int64(cap(ids)) * 4)
		}
	}
	c := ix.cache
	n += alloc(int64(unsafe.Sizeof(*c))) + alloc(int64(cap(c.stems))*stringHeader) + alloc(int64(c.stemTable.Slots())*4)
	for _, s := range c.stems {
		n += alloc(int64(len(s)))
	}
	n += alloc(int64(cap(c.words))*stringHeader) + alloc(int64(cap(c.wordIDs))*4) + alloc(int64(c.wordTable.Slots())*4)
	for _, w := range c.words {
		n += alloc(int64(len(w)))
	}
	n += alloc(int64(cap(ix.idf))*8) + alloc(int64(cap(ix.postingDocs))*4) + alloc(int64(cap(ix.postingWeights))*8) + alloc(int64(cap(ix.postingsAt))*4)
	n += alloc(int64(cap(ix.alphabet)) * 4)
	if vx := ix.vectors; vx != nil {
		n += alloc(int64(unsafe.Sizeof(*vx))) + alloc(int64(cap(vx.values))) + alloc(int64(cap(vx.scales))*4)
	}
	n += alloc(int64(cap(ix.pairKeys))*8) + alloc(int64(cap(ix.pairAt))*4) + alloc(int64(cap(ix.pairDocs))*4)
	return n
}

// alloc is n rounded up as the allocator's size classes round an allocation: to 8 bytes for small ones, and to
// steps of an eighth of the power of two at or below n above that, which the classes follow within a few
// percent.
func alloc(n int64) int64 {
	if n <= 0 {
		return 0
	}
	step := int64(8)
	if n > 128 {
		step = int64(1) << (bits.Len64(uint64(n)) - 4)
	}
	return (n + step - 1) / step * step
}
