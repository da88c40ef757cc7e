package assistant

import (
	"slices"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// Options say which of its lexical resources and heuristics an index is built and searched with. The zero value,
// what NewIndexForLocale builds, has them all; the others exist to measure on the evaluation bases what each
// earns (make ablation; see docs/assistant.md).
type Options struct {
	// WithoutResources are the language's resources the index does without.
	WithoutResources []lang.Resource
	// WithoutHeuristics are the engine's heuristics the index does without.
	WithoutHeuristics []Heuristic
}

// Heuristic names a heuristic of the engine that an index can do without (see Options).
type Heuristic string

// The engine's heuristics.
const (
	// Typos matches a word the index lacks to the indexed words one typo away (fuzzyFactor).
	Typos Heuristic = "typos"
	// Pairs adds pairBonus for two neighbouring query words that are neighbours in an item.
	Pairs Heuristic = "pairs"
	// TitleBonus moves up the items whose title the question names (titleBonus).
	TitleBonus Heuristic = "titlebonus"
	// TitleFloor answers at titleFloor of the threshold a question that names its item's whole title.
	TitleFloor Heuristic = "titlefloor"
	// Strength lets a few strongly matched rare words make an answer confident without covering the question
	// (strengthWords).
	Strength Heuristic = "strength"
	// Asked answers a question that asks one of an item's listed questions from it first (askedShare).
	Asked Heuristic = "asked"
)

// Heuristics lists every heuristic, in the order the ablation reports them.
var Heuristics = []Heuristic{Typos, Pairs, TitleBonus, TitleFloor, Strength, Asked}

// uses reports whether the index searches with heuristic h.
func (ix *Index) uses(h Heuristic) bool { return ix == nil || !slices.Contains(ix.without, h) }
