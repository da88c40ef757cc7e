package assistant

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// How much an answer quotes and cites (the weights that decide it are in weights.go).
const (
	// maxSources is the most items an answer cites.
	maxSources = 3
	// maxAnswerSentences is the most sentences an answer quotes from the best item.
	maxAnswerSentences = 3
	// candidates is how many hits are considered for an answer.
	candidates = 5
)

// Retrieval is the default Responder. It needs no network: it answers from the best matching knowledge items of
// the request's Index, quoting their most relevant sentences and citing them, answers greetings and thanks, and
// falls back to the merchant's message when nothing matches well enough. The zero value is ready to use and safe
// for concurrent use.
type Retrieval struct {
	// MinConfidence is the confidence, from 0 to 1, the best item needs for an answer (see confidence), or
	// half of it when the question names the item's whole title (see confident); zero means
	// DefaultMinConfidence.
	MinConfidence float64
	// MinSimilarity is the least cosine between the question's embedding and the best item's at which it is
	// answered from whatever words they share (see answerable); zero means DefaultMinSimilarity. An answer needs
	// more when the knowledge base's items are nearer each other than that on average (see similarityThreshold).
	MinSimilarity float64
}

var _ Responder = Retrieval{}

// Respond answers req.Message from req.Index.
func (r Retrieval) Respond(ctx context.Context, req Request) (Reply, error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	texts := textsForRequest(req)
	switch lang.ClassifySmallTalk(req.Message) {
	case lang.Greeting:
		return Reply{Text: texts.greeting, Kind: KindGreeting, Answered: true}, nil
	case lang.Thanks:
		return Reply{Text: texts.thanks, Kind: KindThanks, Answered: true}, nil
	}
	ix := req.Index
	q := ix.parseQuery(searchText(req))
	matches := ix.rank(q, candidates)
	if m, ok := ix.curatedMatch(searchText(req), matches); ok {
		return ix.curatedReply(m), nil
	}
	if !r.answerable(ix, q, matches) && req.QueryVector != nil {
		// What the words answer confidently stays theirs: fused, a paraphrase's nearer item moved a right answer
		// from its first place on the tuning parts as often as it mended a wrong one. What they decline is
		// searched by meaning as well, and answered when an item is near enough.
		matches = ix.search(q, req.QueryVector, candidates)
	}
	if !r.answerable(ix, q, matches) {
		reply := fallback(req, texts)
		reply.Sources = r.suggestions(ix, q, matches)
		return reply, nil
	}
	return r.answer(ix, req.Message, q, matches, texts), nil
}

// answerable reports whether the best match is good enough to answer q from.
func (r Retrieval) answerable(ix *Index, q query, matches []match) bool {
	if len(matches) == 0 || !ix.quotable(matches[0].doc) {
		return false
	}
	if matches[0].similarity >= r.similarityThreshold(ix) {
		return true // near in meaning, whatever words it shares: a paraphrase, or another language
	}
	if !matches[0].wordMatched {
		return false
	}
	if matches[0].asked {
		return true
	}
	about := ix.uses(TitleFloor) && q.allMatched() && ix.namesTitle(q, matches[0].doc)
	return confident(ix.confidence(matches[0]), about, r.threshold())
}

// threshold is the confidence an answer needs.
func (r Retrieval) threshold() float64 {
	if r.MinConfidence <= 0 {
		return DefaultMinConfidence
	}
	return r.MinConfidence
}

// similarityThreshold is the cosine an answer by meaning needs from ix: MinSimilarity, or the mean cosine between
// ix's items when that is higher. A cosine means nothing on its own: a model that puts every text of a base near
// every other (an English model on German, where any two items have a cosine of 0.9) would answer every
// question; the question must be nearer its item than the base's items are to each other.
func (r Retrieval) similarityThreshold(ix *Index) float64 {
	floor := r.MinSimilarity
	if floor <= 0 {
		floor = DefaultMinSimilarity
	}
	if ix.vectors == nil {
		return floor
	}
	return max(floor, ix.vectors.mean)
}

// maxSuggestions is the most items a reply that has no answer suggests.
const maxSuggestions = 3

// suggestions are the items a reply that has no answer offers instead, best first, each with its best sentence:
// the matches with at least half the confidence an answer needs, as a question about an item's title does
// (titleFloor). A declined question is often a paraphrase whose item ranks first, which the visitor then
// reaches in one click; an off-topic question gets a few links that need not be followed, and the reply still
// says that it has no answer.
func (r Retrieval) suggestions(ix *Index, q query, matches []match) []Source {
	var out []Source
	for _, m := range matches[:min(len(matches), maxSuggestions)] {
		byWords := m.wordMatched && ix.confidence(m) >= titleFloor*r.threshold()
		if !byWords && m.similarity < titleFloor*r.similarityThreshold(ix) {
			break
		}
		out = append(out, ix.source(m, ix.bestSentences(m.doc, q)[0]))
	}
	return out
}

// confident decides whether to answer from a match of confidence conf (see confidence): when conf reaches the
// threshold, or half of it when the question is about the match's item: it names everything the item's title
// does, and the knowledge base has a match for each of its informative words. A paraphrase ("are x-rays safe"
// for "X-rays", "how much is it to park overnight" for "Parking") brings words of its own that the item lacks,
// which lower its confidence as much as an off-topic question's; but naming the whole title says the question
// is about the item's subject, which an off-topic question that merely shares a word with the knowledge base
// seldom does. A word the base has nothing for, not even a near neighbour ("can my horse clock in?"), says it
// may be about something else.
func confident(conf float64, about bool, threshold float64) bool {
	return conf >= threshold || (about && conf >= titleFloor*threshold)
}

// allMatched reports whether every informative word of q but the optional ones matches some index term.
func (q query) allMatched() bool {
	return !slices.ContainsFunc(q.terms, func(qt queryTerm) bool { return qt.idf > 0 && len(qt.alts) == 0 && !qt.optional })
}

// namesTitle reports whether q names every informative word of the title of document d, or of one of the
// questions listed for its item, by the word itself or one of its close matches (minTitleShare).
func (ix *Index) namesTitle(q query, d int32) bool {
	if title := ix.docs[d].title; len(title) > 0 && namesAll(q, title) {
		return true
	}
	return slices.ContainsFunc(ix.questionsOf(d), func(ids []int32) bool { return namesAll(q, ids) })
}

// confidence says, from 0 to 1, how sure we are that a match answers the query. Raw BM25 scores grow with the
// size of the index, so it combines two normalised measures and takes the larger:
//
//   - coverage: the IDF-weighted share of the query's informative words the item contains. A question about
//     something the knowledge base never mentions ("do you sell cars?") leaves its rarest words unmatched.
//   - strength: the BM25 score divided by the highest IDF the index can give (that of a word no item contains),
//     which is about the number of rare query words the item matches well; divided by strengthWords, so that
//     a few strongly matched rare words are enough. This keeps questions that wrap a well matched core in words the knowledge
//     base never uses ("I'm stationed overseas, can you ship to my APO address?").
//
// The margin over the second match is not used: in a knowledge base about one shop, several items often share
// the question's words, and a narrow lead did not predict wrong answers on the test questions.
func (ix *Index) confidence(m match) float64 {
	strength := m.score / ix.unknownIDF
	if !ix.uses(Strength) {
		strength = 0
	}
	return min(1, max(m.covered, strength/strengthWords))
}

// Fallback is the reply when the knowledge base has no answer: the merchant's fallback message, or the built-in
// one of req's locale, with the offer to take contact details.
func Fallback(req Request) Reply { return fallback(req, textsForRequest(req)) }

// fallback is the reply when the knowledge base has no answer.
func fallback(req Request, texts localeTexts) Reply {
	text := strings.TrimSpace(req.FallbackMessage)
	if text == "" {
		text = texts.fallback
	}
	return Reply{Text: text, Kind: KindFallback}
}

// answer composes the reply from the best match's most relevant sentences and cites the matches close to it.
// When the message asks two things ("can I bring my dog, and is breakfast included?") and another item answers
// the second on its own, the reply quotes that item as well and says so.
func (r Retrieval) answer(ix *Index, message string, q query, matches []match, texts localeTexts) Reply {
	top := matches[0]
	used := ix.bestSentences(top.doc, q)
	text := strings.Join(used, " ")
	sources := []Source{ix.source(top, text)}
	cited := []int32{ix.docs[top.doc].item}
	if part, pq, ok := r.otherPart(ix, message, ix.docs[top.doc].item); ok {
		quote := strings.Join(ix.bestSentences(part.doc, pq), " ")
		text += "\n\n" + fmt.Sprintf(texts.otherPart, ix.items[ix.docs[part.doc].item].Title) + " " + quote
		sources = append(sources, ix.source(part, quote))
		cited = append(cited, ix.docs[part.doc].item)
	}
	for _, m := range matches[1:] {
		if len(sources) == maxSources || m.score < closeScore*top.score {
			break
		}
		if !slices.Contains(cited, ix.docs[m.doc].item) {
			sources = append(sources, ix.source(m, strings.Join(ix.bestSentences(m.doc, q)[:1], " ")))
		}
	}
	return Reply{Text: text, Sources: sources, Kind: KindAnswer, Answered: true, Confidence: ix.confidence(top)}
}

// CuratedReply returns the curated answer to req.Message (see Item.Curated) when there is one: the content of the
// first of the best matches whose item is curated and which the message asks, by one of the item's listed
// questions or by a paraphrase the item matches with at least CuratedConfidence. It is what a model's responder
// gives before asking the model: the merchant wrote the answer, and it is given as written, not rephrased, as the
// answer products' curated answers are (a model's rewording could drop the one condition that matters).
func CuratedReply(req Request) (Reply, bool) {
	ix := req.Index
	if ix.Len() == 0 || IsSmallTalk(req.Message) {
		return Reply{}, false
	}
	text := searchText(req)
	m, ok := ix.curatedMatch(text, ix.rank(ix.parseQuery(text), candidates))
	if !ok {
		return Reply{}, false
	}
	return ix.curatedReply(m), true
}

// curatedMatch returns the first of matches whose item is curated and asked, text being the question: by one of its
// listed questions, word for word or as the retriever reads it (match.asked), or with at least CuratedConfidence.
func (ix *Index) curatedMatch(text string, matches []match) (match, bool) {
	for _, m := range matches {
		it := &ix.items[ix.docs[m.doc].item]
		if !it.Curated || !m.wordMatched {
			continue
		}
		if m.asked || ix.confidence(m) >= CuratedConfidence || listsQuestion(it, text) {
			return m, true
		}
	}
	return match{}, false
}

// listsQuestion reports whether text is one of the item's listed questions, its words the same whatever their case
// and punctuation. Ranking reads a question by its informative words, and a listed question of everyday ones ("how
// long to Toronto?") may not reach askedShare even asked as listed.
func listsQuestion(it *Item, text string) bool {
	words := strings.Join(lang.Tokenize(text), " ")
	return words != "" && slices.ContainsFunc(it.Questions, func(q string) bool { return strings.Join(lang.Tokenize(q), " ") == words })
}

// curatedReply is the curated answer of match m: its item's content, whole and as written, citing the item.
func (ix *Index) curatedReply(m match) Reply {
	it := ix.items[ix.docs[m.doc].item]
	text := strings.TrimSpace(it.Content)
	if text == "" {
		text = it.Title
	}
	return Reply{Text: text, Sources: []Source{ix.source(m, text)}, Kind: KindAnswer, Answered: true, Confidence: 1}
}

// maxClauses is the most clauses of a message tried as its other part: the first and the last half of them, where
// a rambling message asks, as a search reads it (maxQueryWords). Each is a search of its own; a message of
// 4,000 characters may have a thousand.
const maxClauses = 8

// otherPart finds a part of message that another item than number item answers on its own: the message is split
// into clauses, and the first clause whose best match is another item, confidently, is the other part. It
// returns the match and the clause's query.
func (r Retrieval) otherPart(ix *Index, message string, item int32) (match, query, bool) {
	clauses := ix.cache.language().SplitClauses(message)
	if len(clauses) < 2 {
		return match{}, query{}, false
	}
	for _, c := range keepEnds(clauses, maxClauses) {
		q := ix.parseQuery(c)
		m := ix.rank(q, 1)
		if len(m) > 0 && ix.docs[m[0].doc].item != item && r.answerable(ix, q, m) {
			return m[0], q, true
		}
	}
	return match{}, query{}, false
}

// source describes a matched item as a citation.
func (ix *Index) source(m match, snippet string) Source {
	it := ix.items[ix.docs[m.doc].item]
	return Source{KnowledgeID: it.ID, Title: it.Title, URL: it.URL, Snippet: snippet, Score: m.score}
}

// quotable reports whether document d has something an answer can quote (see bestSentences): a sentence or its
// item's title. An item may match through its listed questions alone.
func (ix *Index) quotable(d int32) bool {
	return len(ix.docs[d].sentences) > 0 || ix.items[ix.docs[d].item].Title != ""
}

// bestSentences returns the one to three sentences of a document that share the most query words, in their
// original order. When no sentence shares any (the item matched on its title or tags), it returns the first one.
// An item without content is represented by its title.
func (ix *Index) bestSentences(d int32, q query) []string {
	sentences := ix.docs[d].sentences
	if len(sentences) == 0 {
		return []string{ix.items[ix.docs[d].item].Title}
	}
	scores := make([]float64, len(sentences))
	order := make([]int, len(sentences))
	for i, s := range sentences {
		scores[i] = sentenceScore(s, q, ix.docs[d].title)
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	best := scores[order[0]]
	keep := make([]int, 1, maxAnswerSentences) // on the stack
	keep[0] = order[0]
	for _, i := range order[1:] {
		if len(keep) == maxAnswerSentences || best == 0 || scores[i] < sentenceKeep*best {
			break
		}
		keep = append(keep, i)
	}
	slices.Sort(keep)
	out := make([]string, len(keep))
	for i, k := range keep {
		out[i] = sentences[k].text
	}
	return out
}

// sentenceScore is the idf-weighted number of query words a sentence contains. Words of the item's title count
// for less: they say which item the question is about ("Ridgeline", "sleeping bag"), not which of its sentences
// answers it ("temperature rating").
func sentenceScore(s sentence, q query, title []int32) float64 {
	score := 0.0
	for _, qt := range q.terms {
		best := 0.0
		for _, a := range qt.alts {
			if slices.Contains(s.terms, a.id) {
				f := a.factor
				if slices.Contains(title, a.id) {
					f *= titleWordInSentence
				}
				best = max(best, f)
			}
		}
		score += qt.idf * best
	}
	return score
}

// IsSmallTalk reports whether message is only a greeting, thanks or a goodbye, which needs no knowledge to answer.
func IsSmallTalk(message string) bool { return lang.ClassifySmallTalk(message) != lang.NotSmallTalk }

// HistoryFor implements HistoryLimiter: a follow-up needs the previous exchange, whose question it is searched
// with (see searchText); any other message, nothing.
func (Retrieval) HistoryFor(message string) int {
	if isFollowUp(message) {
		return 2
	}
	return 0
}

// searchText is what a message is searched with: a follow-up ("and how long does it take?") is searched with the
// visitor's previous question, whose subject it leaves out.
func searchText(req Request) string {
	if !isFollowUp(req.Message) {
		return req.Message
	}
	for i := len(req.History) - 1; i >= 0; i-- {
		if req.History[i].Visitor {
			return req.Message + "\n" + req.History[i].Text
		}
	}
	return req.Message
}

// maxFollowUpWords is the longest message taken for a follow-up; longer ones name their subject.
const maxFollowUpWords = 8

// followUpStarts open a message that continues the previous question; followUpRefs point back to its subject.
var (
	followUpStarts = []string{"and", "also", "but", "so", "what about", "how about", "und", "et", "y"}
	followUpRefs   = []string{"it", "that", "this", "they", "them", "there", "those", "these", "es", "das", "dort", "ça", "eso"}
)

// isFollowUp reports whether a message reads as a continuation of the previous question: short, and opening with
// a conjunction or pointing back with a pronoun.
func isFollowUp(message string) bool {
	words := lang.Tokenize(message)
	if len(words) == 0 || len(words) > maxFollowUpWords {
		return false
	}
	text := strings.Join(words, " ")
	for _, s := range followUpStarts {
		if text == s || strings.HasPrefix(text, s+" ") {
			return true
		}
	}
	return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(followUpRefs, w) })
}
