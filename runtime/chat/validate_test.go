package chat_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

func TestValidateKnowledge(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	tags := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "t"
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   chat.KnowledgeInput
		want []chat.FieldError // nil: valid
		item store.Knowledge   // for a valid input
	}{
		{name: "trimmed", in: chat.KnowledgeInput{Title: " Gift cards ", Content: "\tNever expire.\n", URL: " https://a.example/g ", Tags: []string{" pay "}},
			item: store.Knowledge{Title: "Gift cards", Content: "Never expire.", URL: "https://a.example/g", Tags: []string{"pay"}}},
		{name: "no tags is an empty list", in: chat.KnowledgeInput{Title: "t", Content: "c"},
			item: store.Knowledge{Title: "t", Content: "c", Tags: []string{}}},
		{name: "at the limits", in: chat.KnowledgeInput{Title: long(chat.MaxTitleRunes), Content: long(chat.MaxContentRunes),
			URL: "https://a.example/" + strings.Repeat("x", chat.MaxURLBytes-18), Tags: append(tags(chat.MaxTags-1), long(chat.MaxTagRunes))},
			item: store.Knowledge{Title: long(chat.MaxTitleRunes), Content: long(chat.MaxContentRunes),
				URL: "https://a.example/" + strings.Repeat("x", chat.MaxURLBytes-18), Tags: append(tags(chat.MaxTags-1), long(chat.MaxTagRunes))}},
		{name: "blank title and content", in: chat.KnowledgeInput{Title: "  ", Content: ""}, want: []chat.FieldError{
			{Field: chat.FieldTitle, Index: -1, Problem: chat.ProblemMissing}, {Field: chat.FieldContent, Index: -1, Problem: chat.ProblemMissing}}},
		{name: "too long", in: chat.KnowledgeInput{Title: long(chat.MaxTitleRunes + 1), Content: long(chat.MaxContentRunes + 1)}, want: []chat.FieldError{
			{Field: chat.FieldTitle, Index: -1, Problem: chat.ProblemTooLong, Limit: chat.MaxTitleRunes, Length: chat.MaxTitleRunes + 1},
			{Field: chat.FieldContent, Index: -1, Problem: chat.ProblemTooLong, Limit: chat.MaxContentRunes, Length: chat.MaxContentRunes + 1}}},
		{name: "a script URL", in: chat.KnowledgeInput{Title: "t", Content: "c", URL: "javascript:alert(1)"}, want: []chat.FieldError{
			{Field: chat.FieldURL, Index: -1, Problem: chat.ProblemNotHTTPURL}}},
		{name: "a relative URL", in: chat.KnowledgeInput{Title: "t", Content: "c", URL: "/gift"}, want: []chat.FieldError{
			{Field: chat.FieldURL, Index: -1, Problem: chat.ProblemNotHTTPURL}}},
		{name: "a long URL", in: chat.KnowledgeInput{Title: "t", Content: "c", URL: "https://a.example/" + strings.Repeat("x", chat.MaxURLBytes)}, want: []chat.FieldError{
			{Field: chat.FieldURL, Index: -1, Problem: chat.ProblemTooLong, Limit: chat.MaxURLBytes, Length: chat.MaxURLBytes + 18}}},
		{name: "a blank tag", in: chat.KnowledgeInput{Title: "t", Content: "c", Tags: []string{"a", " "}}, want: []chat.FieldError{
			{Field: chat.FieldTags, Index: 1, Problem: chat.ProblemMissing}}},
		{name: "a long tag", in: chat.KnowledgeInput{Title: "t", Content: "c", Tags: []string{long(chat.MaxTagRunes + 1)}}, want: []chat.FieldError{
			{Field: chat.FieldTags, Index: 0, Problem: chat.ProblemTooLong, Limit: chat.MaxTagRunes, Length: chat.MaxTagRunes + 1}}},
		{name: "too many tags", in: chat.KnowledgeInput{Title: "t", Content: "c", Tags: tags(chat.MaxTags + 1)}, want: []chat.FieldError{
			{Field: chat.FieldTags, Index: -1, Problem: chat.ProblemTooMany, Limit: chat.MaxTags, Length: chat.MaxTags + 1}}},
		{name: "line breaks as LF", in: chat.KnowledgeInput{Title: "a\rb", Content: "one\r\ntwo\rthree\n\r\nfour", Tags: []string{"x\r\ny"}},
			item: store.Knowledge{Title: "a\nb", Content: "one\ntwo\nthree\n\nfour", Tags: []string{"x\ny"}}},
		{name: "questions folded to a line", in: chat.KnowledgeInput{Title: "t", Content: "c", Questions: []string{" When do you\r\n open? ", "Open\tSundays?"}},
			item: store.Knowledge{Title: "t", Content: "c", Tags: []string{}, Questions: []string{"When do you open?", "Open Sundays?"}}},
		{name: "questions at the limits", in: chat.KnowledgeInput{Title: "t", Content: "c", Questions: append(tags(chat.MaxQuestions-1), long(chat.MaxQuestionRunes))},
			item: store.Knowledge{Title: "t", Content: "c", Tags: []string{}, Questions: append(tags(chat.MaxQuestions-1), long(chat.MaxQuestionRunes))}},
		{name: "a blank, a long and a NUL question", in: chat.KnowledgeInput{Title: "t", Content: "c", Questions: []string{"\n", long(chat.MaxQuestionRunes + 1), "a\x00"}},
			want: []chat.FieldError{{Field: chat.FieldQuestions, Index: 0, Problem: chat.ProblemMissing},
				{Field: chat.FieldQuestions, Index: 1, Problem: chat.ProblemTooLong, Limit: chat.MaxQuestionRunes, Length: chat.MaxQuestionRunes + 1},
				{Field: chat.FieldQuestions, Index: 2, Problem: chat.ProblemNotText}}},
		{name: "too many questions", in: chat.KnowledgeInput{Title: "t", Content: "c", Questions: tags(chat.MaxQuestions + 1)}, want: []chat.FieldError{
			{Field: chat.FieldQuestions, Index: -1, Problem: chat.ProblemTooMany, Limit: chat.MaxQuestions, Length: chat.MaxQuestions + 1}}},
		{name: "a draft", in: chat.KnowledgeInput{Title: "t", Content: "c", Status: chat.StatusDraft},
			item: store.Knowledge{Title: "t", Content: "c", Tags: []string{}, Draft: true}},
		{name: "published by name, trimmed", in: chat.KnowledgeInput{Title: "t", Content: "c", Status: " published\n"},
			item: store.Knowledge{Title: "t", Content: "c", Tags: []string{}}},
		{name: "a status of another case or unknown", in: chat.KnowledgeInput{Title: "t", Content: "c", Status: "Draft"}, want: []chat.FieldError{
			{Field: chat.FieldStatus, Index: -1, Problem: chat.ProblemNotStatus}}},
		{name: "NUL and bad UTF-8", in: chat.KnowledgeInput{Title: "a\x00b", Content: "\xff", URL: "https://a.example/\x00", Tags: []string{"\x00"}}, want: []chat.FieldError{
			{Field: chat.FieldTitle, Index: -1, Problem: chat.ProblemNotText}, {Field: chat.FieldContent, Index: -1, Problem: chat.ProblemNotText},
			{Field: chat.FieldURL, Index: -1, Problem: chat.ProblemNotText}, {Field: chat.FieldTags, Index: 0, Problem: chat.ProblemNotText}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, problems := tc.in.Validate()
			if !reflect.DeepEqual(problems, tc.want) {
				t.Fatalf("problems %+v, want %+v", problems, tc.want)
			}
			if tc.want == nil && !reflect.DeepEqual(k, tc.item) {
				t.Errorf("item %+v, want %+v", k, tc.item)
			}
		})
	}
}
