package lang

// SmallTalk is what kind of pleasantry a message is, if it is nothing else.
type SmallTalk int

// The kinds of pleasantry.
const (
	// NotSmallTalk is a message that says more than a pleasantry.
	NotSmallTalk SmallTalk = iota
	// Greeting is only a greeting.
	Greeting
	// Thanks is only thanks or a goodbye.
	Thanks
)

// maxSmallTalkWords is the longest message that can still be only a greeting or thanks.
const maxSmallTalkWords = 8

// ClassifySmallTalk reports whether message is essentially only a greeting or only thanks or a goodbye. A message
// with any other word ("hi, what is your return policy?") is not small talk.
func ClassifySmallTalk(message string) SmallTalk {
	words := Tokenize(message)
	if len(words) == 0 || len(words) > maxSmallTalkWords {
		return NotSmallTalk
	}
	greeting, thanks := false, false
	for _, w := range words {
		switch {
		case has(thanksWords, w):
			thanks = true
		case has(greetingWords, w):
			greeting = true
		case !has(pleasantryFiller, w):
			return NotSmallTalk
		}
	}
	switch {
	case thanks:
		return Thanks
	case greeting:
		return Greeting
	}
	return NotSmallTalk
}

func has(set map[string]struct{}, w string) bool {
	_, ok := set[w]
	return ok
}

// greetingWords are words that make a message a greeting.
var greetingWords = toSet(`hi hello hey heya hiya howdy hallo hola bonjour salut greetings yo
	morning afternoon evening moin servus grüezi gruezi tag morgen abend`)

// thanksWords are words that make a message thanks or a goodbye.
var thanksWords = toSet(`thanks thank thx ty tysm thankyou cheers appreciated appreciate bye goodbye byebye cya
	ciao farewell night nacht dank danke dankeschön tschüss tschüs tschuess wiedersehen merci gracias adiós adios`)

// pleasantryFiller are words that may accompany a greeting or thanks without making it a question.
var pleasantryFiller = toSet(`a all and again bot day everyone everybody folks for friend good great guys have
	help helpful i it lot much nice ok okay oh perfect so that thats the there team very was wow you
	awesome cool later see soon night well many bis bald auf dir ihnen vielen sehr schön schoen guten und
	hallöchen liebe lieben gute beaucoup muchas buenos buenas días dias`)
