// Package synthkb writes synthetic knowledge bases for memory tests and benchmarks: items whose words follow a
// Zipf distribution over a large vocabulary, as natural text does, so that an index of them holds about as many
// distinct words, postings and typo candidates as one of a real shop's help pages.
package synthkb

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Item is one synthetic knowledge item.
type Item struct {
	Title   string
	Content string
	Tags    []string
}

// vocabulary is how many distinct words the generator draws from.
const vocabulary = 20000

// syllables make up the generated words; words are 2 to 4 syllables long, so most are long enough for typo
// matching, like the words of real help pages.
var syllables = strings.Fields(`ba be bi bo bu ca ce co cu da de di do du fa fe fi fo ga ge go ha he hi ho ka ke
	ki ko la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so su ta te ti to tu va ve
	vi vo wa we wi ya yo za ze zi zo ship tent pack boot rain ver ment tion al er ing`)

// Generator draws items. It is deterministic for a seed and not safe for concurrent use.
type Generator struct {
	rnd   *rand.Rand
	zipf  *rand.Zipf
	words []string
}

// New returns a generator for seed; merchants given different seeds get different texts over the same
// vocabulary.
func New(seed uint64) *Generator {
	rnd := rand.New(rand.NewPCG(seed, 0x5eed)) //nolint:gosec // test data, not secrets
	words := make([]string, vocabulary)
	vocab := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // one vocabulary for every seed
	seen := map[string]bool{}
	for i := range words {
		for {
			var b strings.Builder
			for range 2 + vocab.IntN(3) {
				b.WriteString(syllables[vocab.IntN(len(syllables))])
			}
			if w := b.String(); !seen[w] {
				seen[w], words[i] = true, w
				break
			}
		}
	}
	return &Generator{rnd: rnd, zipf: rand.NewZipf(rnd, 1.1, 2, vocabulary-1), words: words}
}

// WithSeed returns a generator for another seed over the same vocabulary, without building it again.
func (g *Generator) WithSeed(seed uint64) *Generator {
	rnd := rand.New(rand.NewPCG(seed, 0x5eed)) //nolint:gosec // test data, not secrets
	return &Generator{rnd: rnd, zipf: rand.NewZipf(rnd, 1.1, 2, vocabulary-1), words: g.words}
}

// Item returns an item of about chars characters of content: sentences of 6 to 17 words, a title of three words
// and two tags.
func (g *Generator) Item(chars int) Item {
	var b strings.Builder
	for b.Len() < chars {
		n := 6 + g.rnd.IntN(12)
		for i := range n {
			w := g.word()
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if i < n-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	content := strings.TrimSpace(b.String())
	if len(content) > chars {
		content = content[:chars]
	}
	return Item{
		Title:   fmt.Sprintf("%s %s %s", g.word(), g.word(), g.word()),
		Content: content,
		Tags:    []string{g.word(), g.word()},
	}
}

// Question returns a visitor's question made of words the items use.
func (g *Generator) Question() string {
	return fmt.Sprintf("How does %s %s work with %s?", g.word(), g.word(), g.word())
}

func (g *Generator) word() string { return g.words[g.zipf.Uint64()] }
