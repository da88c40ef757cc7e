package chat

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/store"
)

// KnowledgeInput is a knowledge item as a merchant writes it, through the API, a dashboard form or an import row.
// Each transport parses its own format into it; Validate is the one place that decides what an item may hold.
type KnowledgeInput struct {
	Title   string
	Content string
	URL     string
	Tags    []string
	// Questions are questions visitors ask that the item answers; each is one line, its white space folded.
	Questions []string
	// Status is StatusPublished or StatusDraft, white space around it trimmed; empty is StatusPublished.
	Status string
	// Curated makes the content the answer to the questions (store.Knowledge.Curated); it needs a question.
	Curated bool
}

// The statuses of a knowledge item, as every transport names them (store.Knowledge.Draft).
const (
	// StatusPublished is an item the assistant answers from.
	StatusPublished = "published"
	// StatusDraft is an item kept but not answered from, cited or suggested.
	StatusDraft = "draft"
)

// StatusOf names k's status.
func StatusOf(k store.Knowledge) string {
	if k.Draft {
		return StatusDraft
	}
	return StatusPublished
}

// ParseStatus reads a status as store.Knowledge.Draft, for an item (Validate) and for a listing's filter
// (store.KnowledgeFilter.Draft): nil when none is given, ok false for a value that names no status.
func ParseStatus(status string) (draft *bool, ok bool) {
	switch status {
	case "":
		return nil, true
	case StatusPublished, StatusDraft:
		d := status == StatusDraft
		return &d, true
	}
	return nil, false
}

// The fields of a knowledge item, as FieldError names them (the API's JSON names).
const (
	FieldTitle     = "title"
	FieldContent   = "content"
	FieldURL       = "url"
	FieldTags      = "tags"
	FieldQuestions = "questions"
	FieldStatus    = "status"
	FieldCurated   = "curated"
)

// Problem says what is wrong with a field; each transport words it in its own language.
type Problem string

// The problems Validate reports.
const (
	// ProblemMissing is an empty or blank title, content, tag or question.
	ProblemMissing Problem = "missing"
	// ProblemTooLong is a title, content, URL, tag or question longer than Limit (runes; bytes for the URL).
	ProblemTooLong Problem = "too_long"
	// ProblemTooMany is more than Limit tags or questions.
	ProblemTooMany Problem = "too_many"
	// ProblemNotHTTPURL is a URL that is not an absolute http or https address.
	ProblemNotHTTPURL Problem = "not_http_url"
	// ProblemNotText is text that is not UTF-8 or holds NUL, which not every store keeps as it is.
	ProblemNotText Problem = "not_text"
	// ProblemNotStatus is a status other than StatusPublished and StatusDraft.
	ProblemNotStatus Problem = "not_status"
	// ProblemNoQuestions is a curated item without a question it is the answer to.
	ProblemNoQuestions Problem = "no_questions"
)

// FieldError is one problem of one field.
type FieldError struct {
	// Field is one of the Field constants.
	Field string
	// Index is the tag's or question's position for a problem of one of them, else -1.
	Index   int
	Problem Problem
	// Limit is the most allowed, for ProblemTooLong and ProblemTooMany.
	Limit int
	// Length is what was given, for ProblemTooLong and ProblemTooMany.
	Length int
}

// Error words the problem in English, for logs and tests; transports word it for their own callers.
func (e FieldError) Error() string {
	name := e.Field
	if e.Index >= 0 {
		name = fmt.Sprintf("%s[%d]", e.Field, e.Index)
	}
	switch e.Problem {
	case ProblemTooLong, ProblemTooMany:
		return fmt.Sprintf("%s: %s (%d, at most %d)", name, e.Problem, e.Length, e.Limit)
	default:
		return fmt.Sprintf("%s: %s", name, e.Problem)
	}
}

// Validate checks in against the limits of one knowledge item and returns it trimmed as an item to store, or
// every problem found, in the order of the fields. Blank tags and questions are refused, not dropped: a
// transport whose format lists them in one text (a form field, a CSV cell) drops the blanks of its own
// splitting. Line breaks are kept as LF, whichever the transport sent (a browser's form and a CSV file CRLF, an
// old file CR), so that a limit counts a break once and an export imports back as it was; a question's runs of
// white space, line breaks among them, become one space: the stores keep questions one a line.
func (in KnowledgeInput) Validate() (store.Knowledge, []FieldError) {
	var problems []FieldError
	add := func(field string, index int, p Problem, limit, length int) {
		problems = append(problems, FieldError{Field: field, Index: index, Problem: p, Limit: limit, Length: length})
	}
	text := func(field string, index int, s string, required bool, maxRunes int) string {
		s = strings.TrimSpace(lineBreaks.Replace(s))
		switch n := utf8.RuneCountInString(s); {
		case !storable(s):
			add(field, index, ProblemNotText, 0, 0)
		case s == "" && required:
			add(field, index, ProblemMissing, 0, 0)
		case n > maxRunes:
			add(field, index, ProblemTooLong, maxRunes, n)
		}
		return s
	}
	k := store.Knowledge{
		Title:   text(FieldTitle, -1, in.Title, true, MaxTitleRunes),
		Content: text(FieldContent, -1, in.Content, true, MaxContentRunes),
		URL:     strings.TrimSpace(in.URL),
		Tags:    make([]string, 0, len(in.Tags)),
	}
	switch u, err := url.Parse(k.URL); {
	case k.URL == "":
	case !storable(k.URL):
		add(FieldURL, -1, ProblemNotText, 0, 0)
	case len(k.URL) > MaxURLBytes:
		add(FieldURL, -1, ProblemTooLong, MaxURLBytes, len(k.URL))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		add(FieldURL, -1, ProblemNotHTTPURL, 0, 0)
	}
	if len(in.Tags) > MaxTags {
		add(FieldTags, -1, ProblemTooMany, MaxTags, len(in.Tags))
	}
	for i, t := range in.Tags {
		k.Tags = append(k.Tags, text(FieldTags, i, t, true, MaxTagRunes))
	}
	if len(in.Questions) > MaxQuestions {
		add(FieldQuestions, -1, ProblemTooMany, MaxQuestions, len(in.Questions))
	}
	for i, q := range in.Questions {
		if q = text(FieldQuestions, i, q, true, MaxQuestionRunes); q != "" {
			k.Questions = append(k.Questions, strings.Join(strings.Fields(q), " "))
		}
	}
	switch draft, ok := ParseStatus(strings.TrimSpace(in.Status)); {
	case !ok:
		add(FieldStatus, -1, ProblemNotStatus, 0, 0)
	case draft != nil:
		k.Draft = *draft
	}
	if k.Curated = in.Curated; in.Curated && len(in.Questions) == 0 {
		add(FieldCurated, -1, ProblemNoQuestions, 0, 0)
	}
	if problems != nil {
		return store.Knowledge{}, problems
	}
	return k, nil
}

// lineBreaks makes each CRLF or CR a LF.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// storable reports whether s is text both stores keep as it is: valid UTF-8 without NUL.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
