package assistant

// The weights by which the engine ranks items and decides whether to answer or decline, in one table: each with
// what it scales and, where it was tuned, the evidence. They were tuned on the tuning parts of the evaluation
// bases and on the demo shop (make quality); the held-out parts say whether a change generalises.

// Ranking: BM25 over the fields of an item.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// titleWeight, tagWeight and questionWeight are how many times each word of the title, of a tag and of a
	// listed question counts; content words count once. They are short, chosen words that say what the item is
	// about.
	titleWeight    = 2
	tagWeight      = 2
	questionWeight = 2
	// minCollection is the fewest items IDF is computed for: a smaller knowledge base counts as padded with
	// items that share none of its words. With two items every word would otherwise look common and a question's
	// matched words would weigh little next to the ones the shop never uses.
	minCollection = 20
)

// Ranking: the share of an exact match a query word earns through a looser one.
const (
	// fuzzyFactor scales the contribution of a query word matched only through a one-letter typo.
	fuzzyFactor = 0.7
	// synonymFactor scales the contribution of a query word matched through a synonym.
	synonymFactor = 0.8
	// derivedFactor scales the contribution of a query word matched through a word WordNet derives from the
	// same root ("pregnant" to "pregnancy"), often of another part of speech.
	derivedFactor = 0.8
	// headFactor scales the contribution of a query word matched to a compound it is the head of ("Bahn" to
	// "Straßenbahn"): a compound is a kind of its head.
	headFactor = 0.7
	// phrasalFactor is the share of an exact match a word of a phrasal verb's meaning is worth to the verb
	// ("work out" to "exercise"): less than a synonym of the word itself, as the phrase has several senses. On
	// the evaluation bases 0.4 to 0.6 did alike, and 0.7 and more answered a question the demo shop should
	// decline.
	phrasalFactor = 0.6
)

// Ranking: what else moves an item up or down.
const (
	// pairBonus is the share of the rarer word's IDF a document earns when two neighbouring query words are
	// neighbours in it too ("sleeping bag", "2-day shipping").
	pairBonus = 0.25
	// titleBonus is the share of the highest IDF (unknownIDF) a document earns, in the order of the ranking, for
	// naming the whole of its title; naming a part earns that part's IDF-weighted share. A question that names
	// what an item's title names is about that item, even when another item matches a rarer word of the
	// question ("do you use white fillings or metal ones" is about "Fillings", not about the price list naming
	// white fillings; "I want to open an account for my business" about "Creating your account"). BM25 weighs a
	// title word as a few content words, which a rare word elsewhere outweighs.
	titleBonus = 0.25
	// answerTypeScale multiplies the BM25 weights of an answer type's marker. A type many items hold weighs
	// little by its IDF, yet the question asks for it, not merely mentions it: on the evaluation bases' tuning
	// parts and the demo shop, 2 answered one more demo question than 1 and 3 lost two hotel and a German answer.
	answerTypeScale = 2
)

// Declining: how sure the engine must be that an item answers the question (see confidence and confident).
const (
	// DefaultMinConfidence is the confidence an answer needs when Retrieval.MinConfidence is zero.
	DefaultMinConfidence = 0.5
	// CuratedConfidence is the confidence with which a question that asks none of a curated item's listed
	// questions word for word is still answered with the item (Item.Curated): a paraphrase the retriever is
	// sure of, well above the confidence an ordinary answer needs, since the curated text is given whole
	// whatever else the question asks.
	CuratedConfidence = 0.8
	// titleFloor is the share of the confidence threshold a match needs when the question is about its item
	// (see confident).
	titleFloor = 0.5
	// minTitleShare is the least share of an exact match through which a query word names a title word: a
	// typo, a longer form or a synonym does, a word merely of the same topic does not.
	minTitleShare = 0.5
	// strengthWords divides a match's strength (its score over the highest IDF, about the number of rare query
	// words it matches well) into its confidence: a few strongly matched rare words are enough.
	strengthWords = 4
	// storyShare is the share of its weight a word counts with against an item when the item does not explain
	// it and the visitor used it only to tell what happened, not to ask (see lang.Language.StoryWords): "my
	// chain snapped on the way to work, can I just drop in and get a new one put on now?" asks about fitting a
	// chain, and "snapped", which no help page writes, says how it came about. On the tuning parts, 0.5 answered
	// two more of the bicycle shop's questions (22 to 24 of 50) and moved no other base's top-1 or declines;
	// 0.25 answered one more and answered a bicycle question from a wrong item that had been declined, 0 lost a
	// bicycle decline.
	storyShare = 0.5
	// askedShare is the least share, each way, of the informative words a question and one of an item's listed
	// questions have in common for the question to ask it: the listed question's words named by the question,
	// and the question's words found in the listed one, each IDF-weighted by its best match. Below it, the
	// visitor asks something more or something else, which ranking weighs.
	askedShare = 0.75
	// listedCoverage is the share a word found only in an item's listed questions counts for in the item's
	// coverage of a question (match.covered), which decides whether to answer. Listed questions are written with
	// everyday verbs ("Can I bring my dog?") that an off-topic question shares ("can I bring my horse"); the word
	// still ranks the item, and a question that asks the listed one is answered by asked.
	listedCoverage = 0.5
)

// Retrieval by meaning: fusing the word ranking with the embeddings' (see vectors.go). Chosen on the evaluation
// bases' tuning parts with the Universal Sentence Encoder lite (make quality-embeddings; docs/assistant.md).
const (
	// fusionWordsWeight is the words' share of an item's fused score, the rest its cosine (see fuse). On the
	// tuning parts, 0.25 put the right item in the first five for 285 of 293 questions (words alone 270, plain
	// reciprocal rank fusion 280, losing two German ones) and lost none on any part; 0.2 lost two German ones,
	// 0.3 answered two fewer, 0.35 to 0.45 found one to three fewer. Cosines normalised per question (min-max)
	// lost German recall; keeping the words' first two or three in place answered fewer.
	fusionWordsWeight = 0.25
	// fuseDepth is how many items of each list are fused.
	fuseDepth = 20
	// DefaultMinSimilarity is the least cosine with the question at which an item the words decline is answered
	// from by meaning, when Retrieval.MinSimilarity is zero; the base's mean cosine between its items raises it
	// (Retrieval.similarityThreshold). On the tuning parts, 0.5 answered 195 of 293 from the right item (words
	// alone 178) and kept every decline; 0.45 and 0.4 lost two hotel declines, 0.55 and 0.6 answered 191 and 188.
	DefaultMinSimilarity = 0.5
)

// Replying: what an answer quotes and cites.
const (
	// closeScore is the share of the best score another hit needs to be cited as well.
	closeScore = 0.8
	// titleWordInSentence is how much a query word that is also in the item's title counts when choosing
	// sentences.
	titleWordInSentence = 0.3
	// sentenceKeep is the share of the best sentence's score another sentence needs to be quoted too.
	sentenceKeep = 0.6
)
