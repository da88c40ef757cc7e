package lang

import (
	_ "embed"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/parley-dev/parley/runtime/assistant/internal/strtab"
)

// wordvecTable is lexicon/wordvec.bin: GloVe vectors of the commonest English words, quantised to 4 bits a
// component, and each word's nearest words (see hack/wordvec for the format).
//
//go:embed lexicon/wordvec.bin
var wordvecTable string

// Vectors are word vectors: words used in like contexts have vectors pointing in like directions, so the
// cosine of two words' vectors says how close they are in meaning ("voucher" and "coupon", "shut" and "close").
type Vectors struct {
	// words lists the words, each at its vector's row, and wordTable finds a word's row: a map of 50,000 words
	// took twice the memory, for as long as the process lives.
	words     []string
	wordTable strtab.Table
	// width is the bytes of a vector, two components each.
	width int
	// data holds the vectors, row after row; it is the embedded table, not a copy.
	data string
	// inverse holds the inverse of each vector's length.
	inverse []float32
	// near holds each word's list of its nearest words (see nearest), one after another; nearAt says where each
	// word's list starts, and nearCosine is the least similarity of the words listed.
	near       string
	nearAt     []uint32
	nearCosine float64
	// products holds, for each two bytes a and b of vectors, the dot product of their two components, at
	// a<<8|b, so that a dot product takes one look-up a byte.
	products *[1 << 16]int8
}

// vectors decodes wordvecTable once, when a knowledge base is first indexed; the table is generated and
// embedded, so a malformed one is a build defect.
var vectors = sync.OnceValue(func() *Vectors {
	v, err := parseWordVectors(wordvecTable)
	if err != nil {
		panic("lang: lexicon/wordvec.bin: " + err.Error())
	}
	return v
})

// parseWordVectors decodes a table written by hack/wordvec.
func parseWordVectors(table string) (*Vectors, error) {
	header, rest, ok := strings.Cut(table, "\n")
	if !ok {
		return nil, fmt.Errorf("no header")
	}
	var count, dims int
	var nearCosine float64
	if _, err := fmt.Sscanf(header, "parley-wordvec 2 %d %d %g", &count, &dims, &nearCosine); err != nil {
		return nil, fmt.Errorf("header %q: %w", header, err)
	}
	if dims%2 != 0 {
		return nil, fmt.Errorf("%d dimensions, want an even number", dims)
	}
	v := &Vectors{words: make([]string, 0, count), wordTable: strtab.New(), width: dims / 2, inverse: make([]float32, count),
		nearCosine: nearCosine}
	for i := range count {
		w, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return nil, fmt.Errorf("%d words, header says %d", i, count)
		}
		if _, dup := v.wordTable.Find(v.words, w); dup {
			return nil, fmt.Errorf("word %q listed twice", w)
		}
		v.words = append(v.words, w)
		v.wordTable.Added(v.words)
		rest = after
	}
	if len(rest) < count*v.width {
		return nil, fmt.Errorf("%d bytes of vectors, want %d", len(rest), count*v.width)
	}
	v.data, rest = rest[:count*v.width], rest[count*v.width:]
	if err := v.parseNear(rest, count); err != nil {
		return nil, fmt.Errorf("nearest words: %w", err)
	}
	v.products = new([1 << 16]int8)
	for a := range 256 {
		for b := range 256 {
			v.products[a<<8|b] = int8(nibble(a)*nibble(b) + nibble(a>>4)*nibble(b>>4)) //nolint:gosec // at most 98
		}
	}
	for i := range count {
		x := v.vector(int32(i))
		if sum := v.dot(x, x); sum > 0 {
			v.inverse[i] = float32(1 / math.Sqrt(float64(sum)))
		}
	}
	return v, nil
}

// parseNear indexes the lists of nearest words, which follow the vectors: for each of count words, the number of
// words listed and their rows, each two bytes little-endian.
func (v *Vectors) parseNear(lists string, count int) error {
	v.near, v.nearAt = lists, make([]uint32, count)
	at := 0
	for row := range count {
		if at+2 > len(lists) {
			return fmt.Errorf("%d lists, want %d", row, count)
		}
		v.nearAt[row] = uint32(at)
		n := int(v.nearRow(at))
		at += 2 + 2*n
		if at > len(lists) {
			return fmt.Errorf("list of %q runs past the end", v.words[row])
		}
		for i := range n {
			if r := v.nearRow(int(v.nearAt[row]) + 2 + 2*i); int(r) >= count {
				return fmt.Errorf("list of %q holds row %d of %d", v.words[row], r, count)
			}
		}
	}
	if at != len(lists) {
		return fmt.Errorf("%d bytes after the lists", len(lists)-at)
	}
	return nil
}

// nearRow decodes the row at offset at of the lists of nearest words.
func (v *Vectors) nearRow(at int) int32 { return int32(v.near[at]) | int32(v.near[at+1])<<8 }

// Nearest calls fn with the row of each word whose cosine similarity with row's is at least nearCosine, in
// ascending order; the table lists them, so that matching a word by meaning takes no scan of a knowledge base's
// vocabulary.
func (v *Vectors) Nearest(row int32, fn func(int32)) {
	at := int(v.nearAt[row])
	n := int(v.nearRow(at))
	for i := range n {
		fn(v.nearRow(at + 2 + 2*i))
	}
}

// nibble returns the component in the low four bits of b, a two's complement integer from -8 to 7.
func nibble(b int) int {
	return int(int8(b<<4)) >> 4 //nolint:gosec // the cast keeps the low byte, whose sign is the nibble's
}

// dot returns the dot product of two vectors.
func (v *Vectors) dot(x, y string) int {
	sum := 0
	y = y[:len(x)]
	for i := range len(x) {
		sum += int(v.products[uint16(x[i])<<8|uint16(y[i])]) // a uint16 index needs no bounds check
	}
	return sum
}

// vector returns the components of a row.
func (v *Vectors) vector(row int32) string {
	at := int(row) * v.width
	return v.data[at : at+v.width]
}

// Row returns the row of a word's vector, trying the word, then its lemma and its stem, so that an inflection
// the table lacks ("refundable") finds its root ("refund").
func (v *Vectors) Row(word string) (int32, bool) {
	if r, ok := v.wordTable.Find(v.words, word); ok {
		return r, true
	}
	if l := lemma(word); l != word {
		if r, ok := v.wordTable.Find(v.words, l); ok {
			return r, true
		}
	}
	return v.wordTable.Find(v.words, stemEnglish(word))
}

// Cosine returns the cosine similarity of two rows' vectors, from -1 to 1.
func (v *Vectors) Cosine(a, b int32) float64 {
	return float64(v.dot(v.vector(a), v.vector(b))) * float64(v.inverse[a]) * float64(v.inverse[b])
}

// Find returns the row of a word's vector, the word itself only: the table lists words most frequent first, so
// the lower of two rows is the commoner word.
func (v *Vectors) Find(word string) (int32, bool) { return v.wordTable.Find(v.words, word) }

// Word returns the word of a row.
func (v *Vectors) Word(row int32) string { return v.words[row] }

// NearCosine is the least similarity of the words Nearest lists: matching by meaning from a lower similarity needs
// the table written again (hack/wordvec).
func (v *Vectors) NearCosine() float64 { return v.nearCosine }
