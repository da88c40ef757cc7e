package dashboard

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ingest"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxFormBytes bounds a form post, an import file included: room for the largest import a plan may allow and
// the form's other fields. An import's own bounds are the plan's, applied by chat; an item's are chat's.
const maxFormBytes = tenant.MaxImportBytes + 64<<10

// knowledgeInput is a knowledge item as a form or an import row gives it.
type knowledgeInput struct {
	Title     string   `json:"title"`
	Content   string   `json:"content"`
	URL       string   `json:"url"`
	Tags      []string `json:"tags"`
	Questions []string `json:"questions"`
	// Status is chat.StatusPublished or chat.StatusDraft; empty is published.
	Status string `json:"status"`
	// Curated makes the content the answer to the questions, given as written.
	Curated bool `json:"curated"`
}

// input is in as chat reads an item.
func (in knowledgeInput) input() chat.KnowledgeInput {
	return chat.KnowledgeInput{Title: in.Title, Content: in.Content, URL: in.URL, Tags: in.Tags, Questions: in.Questions,
		Status: in.Status, Curated: in.Curated}
}

// check validates in with chat's rules and returns it as an item, or says in lang what is wrong (the first
// problem, as a form shows one).
func (in knowledgeInput) check(lang string) (store.Knowledge, string) {
	k, problems := in.input().Validate()
	if problems != nil {
		return store.Knowledge{}, knowledgeProblem(lang, problems[0])
	}
	return k, ""
}

// knowledgeProblems are the dashboard's words for a knowledge item's problems, by field and problem; a %d is
// the limit.
var knowledgeProblems = map[problemKey]string{
	{chat.FieldTitle, chat.ProblemMissing}:       "the title is missing",
	{chat.FieldTitle, chat.ProblemTooLong}:       "the title is longer than %d characters",
	{chat.FieldContent, chat.ProblemMissing}:     "the content is missing",
	{chat.FieldContent, chat.ProblemTooLong}:     "the content is longer than %d characters",
	{chat.FieldURL, chat.ProblemTooLong}:         "the URL must be an absolute http or https address",
	{chat.FieldURL, chat.ProblemNotHTTPURL}:      "the URL must be an absolute http or https address",
	{chat.FieldTags, chat.ProblemMissing}:        "a tag is empty",
	{chat.FieldTags, chat.ProblemTooLong}:        "a tag is longer than %d characters",
	{chat.FieldTags, chat.ProblemTooMany}:        "there are more than %d tags",
	{chat.FieldTitle, chat.ProblemNotText}:       "the title has characters that cannot be stored",
	{chat.FieldContent, chat.ProblemNotText}:     "the content has characters that cannot be stored",
	{chat.FieldURL, chat.ProblemNotText}:         "the URL has characters that cannot be stored",
	{chat.FieldTags, chat.ProblemNotText}:        "a tag has characters that cannot be stored",
	{chat.FieldQuestions, chat.ProblemMissing}:   "a question is empty",
	{chat.FieldQuestions, chat.ProblemTooLong}:   "a question is longer than %d characters",
	{chat.FieldQuestions, chat.ProblemTooMany}:   "there are more than %d questions",
	{chat.FieldQuestions, chat.ProblemNotText}:   "a question has characters that cannot be stored",
	{chat.FieldStatus, chat.ProblemNotStatus}:    "the status must be published or draft",
	{chat.FieldCurated, chat.ProblemNoQuestions}: "a curated answer needs a question it answers",
}

type problemKey struct {
	field   string
	problem chat.Problem
}

// knowledgeProblem words p in lang.
func knowledgeProblem(lang string, p chat.FieldError) string {
	text, ok := knowledgeProblems[problemKey{p.Field, p.Problem}]
	if !ok {
		return p.Error() // not reached while the table covers what chat reports (TestKnowledgeProblems)
	}
	text = translate(lang, text)
	if strings.Contains(text, "%d") {
		return fmt.Sprintf(text, p.Limit)
	}
	return text
}

// splitTags splits the comma-separated tags of a form field or CSV cell, dropping the blanks of the splitting
// ("shipping, returns," is two tags).
func splitTags(s string) []string {
	tags := []string{}
	for t := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(t) != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// splitLines splits the questions of a form field or CSV cell, one a line, each trimmed, dropping blank lines.
func splitLines(s string) []string {
	var lines []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// formInput is the item a knowledge form sends. A browser sends a textarea's line breaks as CRLF, whatever the
// page holds; validating makes them LF again (chat.KnowledgeInput.Validate). The draft box sends status=draft
// when it is ticked and nothing when it is not: published; the curated box likewise sends curated=on.
func formInput(r *http.Request) knowledgeInput {
	return knowledgeInput{Title: r.PostFormValue("title"), Content: r.PostFormValue("content"),
		URL: r.PostFormValue("url"), Tags: splitTags(r.PostFormValue("tags")), Questions: splitLines(r.PostFormValue("questions")),
		Status: r.PostFormValue("status"), Curated: r.PostFormValue("curated") == "on"}
}

// inputOf is an item as its form shows it.
func inputOf(k store.Knowledge) knowledgeInput {
	return knowledgeInput{Title: k.Title, Content: k.Content, URL: k.URL, Tags: orEmpty(k.Tags), Questions: orEmpty(k.Questions),
		Status: chat.StatusOf(k), Curated: k.Curated}
}

// knowledge lists and searches the knowledge base, with the forms to add and import items.
func (d *Dashboard) knowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	return d.knowledgePage(w, r, v, http.StatusOK, nil)
}

func (d *Dashboard) knowledgePage(w http.ResponseWriter, r *http.Request, v *view, status int, importErrors []string) error {
	return d.renderKnowledge(w, r, v, status, map[string]any{"ImportErrors": importErrors})
}

// renderKnowledge renders the knowledge page with data, to which it adds the list and the plan's use. A data
// that holds New, the add form's item (a drafted answer), is not changed by the question parameter.
func (d *Dashboard) renderKnowledge(w http.ResponseWriter, r *http.Request, v *view, status int, data map[string]any) error {
	q := r.URL.Query()
	data["Query"], data["Status"] = q.Get("q"), q.Get("status")
	// A question to answer (from the overview's unanswered questions): the items that may answer it, to list it
	// under, and the add form with it as the new item's question.
	if question := askedQuestion(r); question != "" && data["New"] == nil {
		hits, err := d.chat.Candidates(r.Context(), v.merchant, question, maxCandidates)
		if err != nil {
			return err
		}
		data["Question"], data["Candidates"], data["New"] = question, hits, knowledgeInput{Questions: []string{question}}
		// From the review queue, the group's questions: saving the new item deals with the group.
		data["Review"] = q["review"]
	}
	// A status parameter that names no status lists every item, as the form's "All" does, not an error page.
	draft, _ := chat.ParseStatus(q.Get("status"))
	list, next, err := d.store.ListKnowledge(r.Context(), v.merchant.MerchantID,
		store.KnowledgeFilter{Query: q.Get("q"), Draft: draft, Limit: pageSize, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	u, err := d.chat.Usage(r.Context(), v.merchant)
	if err != nil {
		return err
	}
	data["List"], data["Next"], data["Usage"] = list, nextPage(r, next), u
	d.render(w, r, v, status, "knowledge", data)
	return nil
}

// sizeLimit says, in v's language, that an item would pass the plan's characters ceiling.
func sizeLimit(v *view) string {
	return fmt.Sprintf(translate(v.lang, "the item would pass your plan's limit of %d characters of knowledge"), v.merchant.Plan.KnowledgeCharacters)
}

// maxCandidates is how many items the knowledge page offers to list a question under.
const maxCandidates = 3

// askedQuestion is the question a knowledge page is asked to help answer (its question parameter), as
// listableQuestion.
func askedQuestion(r *http.Request) string { return listableQuestion(r.URL.Query().Get("question")) }

// listableQuestion returns text as one line, as an item's questions are, or "" when it could not be one.
func listableQuestion(text string) string {
	q := strings.Join(strings.Fields(text), " ")
	if _, problems := (chat.KnowledgeInput{Title: "t", Content: "c", Questions: []string{q}}).Validate(); problems != nil {
		return ""
	}
	return q
}

// editKnowledge shows an item's form.
func (d *Dashboard) editKnowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	k, err := d.store.GetKnowledge(r.Context(), v.merchant.MerchantID, r.PathValue("id"))
	if err != nil {
		return err
	}
	item := inputOf(k)
	// From the review queue, the group's questions: saving the item deals with the group.
	data := map[string]any{"ID": k.ID, "Item": item, "Review": r.URL.Query()["review"]}
	// A question to list under the item (from the knowledge page's candidates): in the form, for the owner to save.
	switch question := askedQuestion(r); {
	case question == "" || slices.ContainsFunc(k.Questions, func(q string) bool { return strings.EqualFold(q, question) }):
	case len(k.Questions) >= chat.MaxQuestions:
		data["Full"], data["MaxQuestions"] = question, chat.MaxQuestions // it could not be saved: say so rather than add it
	default:
		item.Questions = append(slices.Clip(k.Questions), question)
		data["Item"], data["Question"] = item, question
	}
	d.render(w, r, v, http.StatusOK, "knowledge_edit", data)
	return nil
}

// createKnowledge adds an item from the form, or shows the form again with what is wrong.
func (d *Dashboard) createKnowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	in, review := formInput(r), reviewed(r)
	form := map[string]any{"Item": in, "Review": review}
	k, problem := in.check(v.lang)
	if problem != "" {
		form["Problem"] = problem
		d.render(w, r, v, http.StatusUnprocessableEntity, "knowledge_edit", form)
		return nil
	}
	var err error
	if review != nil {
		_, err = d.chat.RecordFix(r.Context(), v.merchant, chat.Fix{Questions: review, New: &k})
	} else {
		_, err = d.chat.CreateKnowledge(r.Context(), v.merchant, k)
	}
	return d.saved(w, r, v, err, review, "created", form)
}

// updateKnowledge saves an item from the form.
func (d *Dashboard) updateKnowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	old, err := d.store.GetKnowledge(r.Context(), v.merchant.MerchantID, r.PathValue("id"))
	if err != nil {
		return err
	}
	in, review := formInput(r), reviewed(r)
	form := map[string]any{"ID": old.ID, "Item": in, "Review": review}
	k, problem := in.check(v.lang)
	if problem != "" {
		form["Problem"] = problem
		d.render(w, r, v, http.StatusUnprocessableEntity, "knowledge_edit", form)
		return nil
	}
	_, err = d.chat.UpdateKnowledge(r.Context(), v.merchant, old, k)
	if err == nil && review != nil {
		_, err = d.chat.RecordFix(r.Context(), v.merchant, chat.Fix{Questions: review, KnowledgeID: old.ID})
	}
	return d.saved(w, r, v, err, review, "updated", form)
}

// reviewed is the group of the review queue an item saved from the form deals with: the questions the form
// carries from the queue, unless the owner unticked the box; nil otherwise.
func reviewed(r *http.Request) []string {
	if r.PostFormValue("dealt_with") != "on" {
		return nil
	}
	return r.PostForm["review"]
}

// saved answers the save of an item's form, whose error is err: back to the review queue when the item dealt
// with the group review, else to the knowledge page saying ok; the form again past the plan's characters ceiling.
func (d *Dashboard) saved(w http.ResponseWriter, r *http.Request, v *view, err error, review []string, ok string, form map[string]any) error {
	switch {
	case errors.Is(err, chat.ErrInvalidFix):
		d.renderErrorView(w, r, v, http.StatusUnprocessableEntity, "That question is no longer in the review queue.")
	case errors.Is(err, store.ErrKnowledgeSizeLimit):
		form["Problem"] = sizeLimit(v)
		d.render(w, r, v, http.StatusConflict, "knowledge_edit", form)
	case err != nil:
		return err
	case review != nil:
		http.Redirect(w, r, prefix+"review?ok=answer-saved", http.StatusSeeOther)
	default:
		http.Redirect(w, r, prefix+"knowledge?ok="+ok, http.StatusSeeOther)
	}
	return nil
}

// deleteKnowledge removes an item.
func (d *Dashboard) deleteKnowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := d.chat.DeleteKnowledge(r.Context(), v.merchant, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, prefix+"knowledge?ok=deleted", http.StatusSeeOther)
	return nil
}

// importKnowledge adds the items of an uploaded JSON or CSV file, all or none: any row with a problem is listed
// (the first chat.MaxImportProblems of them, and how many more) and nothing is imported.
func (d *Dashboard) importKnowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	file, header, err := r.FormFile("file")
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return err
	}
	if err != nil {
		return d.knowledgePage(w, r, v, http.StatusBadRequest, []string{translate(v.lang, "Choose a JSON or CSV file to import.")})
	}
	defer func() { _ = file.Close() }()
	isJSON, err := jsonImport(header.Filename, file)
	if err != nil {
		return fmt.Errorf("reading the import: %w", err)
	}
	parse, where := parseCSVImport, "Line %d"
	if isJSON {
		parse, where = parseJSONImport, "Item %d"
	}
	_, err = d.chat.ImportKnowledge(r.Context(), v.merchant, file, parse)
	var (
		problem *importProblem
		rows    *chat.ImportRowsError
		limit   *chat.ImportLimitError
		ceiling *chat.ImportCeilingError
	)
	switch {
	case err == nil:
		http.Redirect(w, r, prefix+"knowledge?ok=imported", http.StatusSeeOther)
		return nil
	case errors.As(err, &problem):
		return d.knowledgePage(w, r, v, http.StatusUnprocessableEntity, []string{problem.in(v.lang)})
	case errors.As(err, &rows):
		problems := make([]string, 0, len(rows.Rows)+2)
		for _, row := range rows.Rows {
			problems = append(problems, fmt.Sprintf(translate(v.lang, "%s: %s"), fmt.Sprintf(translate(v.lang, where), row.Position),
				knowledgeProblem(v.lang, row.Problems[0])))
		}
		if rows.More > 0 {
			problems = append(problems, fmt.Sprintf(translate(v.lang, "%d more rows have problems."), rows.More))
		}
		problems = append(problems, translate(v.lang, "Nothing was imported. Correct these rows and import the file again."))
		return d.knowledgePage(w, r, v, http.StatusUnprocessableEntity, problems)
	case errors.Is(err, chat.ErrNoImportItems):
		return d.knowledgePage(w, r, v, http.StatusUnprocessableEntity, []string{translate(v.lang, "The file has no items.")})
	case errors.As(err, &limit) && limit.Bound == chat.ImportBoundItems:
		return d.knowledgePage(w, r, v, http.StatusUnprocessableEntity,
			[]string{fmt.Sprintf(translate(v.lang, "At most %d items can be imported at once."), limit.Limit)})
	case errors.As(err, &limit):
		return d.knowledgePage(w, r, v, http.StatusRequestEntityTooLarge,
			[]string{fmt.Sprintf(translate(v.lang, "The file is larger than your plan's limit of %d KiB for an import. Nothing was imported."), limit.Limit>>10)})
	case errors.As(err, &ceiling) && errors.Is(err, store.ErrKnowledgeLimit):
		return d.knowledgePage(w, r, v, http.StatusConflict, []string{fmt.Sprintf(
			translate(v.lang, "The %d items would pass your plan's limit of %d items. Nothing was imported."),
			ceiling.Items, v.merchant.Plan.KnowledgeItems)})
	case errors.As(err, &ceiling) && errors.Is(err, store.ErrKnowledgeSizeLimit):
		return d.knowledgePage(w, r, v, http.StatusConflict, []string{fmt.Sprintf(
			translate(v.lang, "The %d items would pass your plan's limit of %d characters of knowledge. Nothing was imported."),
			ceiling.Items, v.merchant.Plan.KnowledgeCharacters)})
	}
	return err
}

// jsonImport reports whether an upload is JSON: by its name, or by its first character other than white space,
// and rewinds the file.
func jsonImport(name string, file io.ReadSeeker) (bool, error) {
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		return true, nil
	}
	isJSON := false
	br := bufio.NewReader(file)
	for {
		b, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, err
		}
		if !unicode.IsSpace(rune(b)) {
			isJSON = b == '['
			break
		}
	}
	_, err := file.Seek(0, io.SeekStart)
	return isJSON, err
}

// importProblem is why a file cannot be imported at all, in the dashboard's words (translated when shown), and
// the parser's own detail, if any.
type importProblem struct {
	words, detail string
}

func (p *importProblem) Error() string {
	if p.detail == "" {
		return p.words
	}
	return p.words + ": " + p.detail
}

// in words p in lang.
func (p *importProblem) in(lang string) string {
	return (&importProblem{words: translate(lang, p.words), detail: p.detail}).Error()
}

// csvHeader is the first line of a knowledge CSV file; tags are separated by commas within their field, and
// questions are one a line within theirs. The status column may be left out, or a cell empty: published.
var csvHeader = []string{"title", "content", "url", "tags", "questions", "status"}

// parseCSVImport reads a knowledge CSV file a record at a time; a row's position is its line.
func parseCSVImport(file io.Reader) iter.Seq2[chat.ImportRow, error] {
	return func(yield func(chat.ImportRow, error) bool) {
		br := bufio.NewReader(file)
		if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\uFEFF")) {
			_, _ = br.Discard(3)
		}
		cr := csv.NewReader(br)
		cr.FieldsPerRecord = -1
		fail := func(p *importProblem) { yield(chat.ImportRow{}, p) }
		head, err := cr.Read()
		if errors.Is(err, io.EOF) {
			fail(&importProblem{words: "the file is empty"})
			return
		}
		if err != nil {
			fail(&importProblem{words: "the file is not valid CSV", detail: err.Error()})
			return
		}
		col := map[string]int{}
		for i, name := range head {
			name = strings.ToLower(strings.TrimSpace(name))
			if _, twice := col[name]; twice {
				fail(&importProblem{words: "the first line names a column twice", detail: name})
				return
			}
			col[name] = i
		}
		_, hasTitle := col["title"]
		_, hasContent := col["content"]
		if !hasTitle || !hasContent {
			fail(&importProblem{words: "the first line must name the columns: title, content, url, tags, questions, status"})
			return
		}
		field := func(rec []string, name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		for {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				fail(&importProblem{words: "the file is not valid CSV", detail: err.Error()})
				return
			}
			line, _ := cr.FieldPos(0)
			in := knowledgeInput{Title: fromCSVSafe(field(rec, "title")), Content: fromCSVSafe(field(rec, "content")),
				URL: fromCSVSafe(field(rec, "url")), Tags: splitTags(fromCSVSafe(field(rec, "tags"))),
				Questions: splitLines(fromCSVSafe(field(rec, "questions"))), Status: field(rec, "status")}
			if !yield(chat.ImportRow{Position: line, Input: in.input()}, nil) {
				return
			}
		}
	}
}

// parseJSONImport reads a JSON array of knowledge items an item at a time; a row's position is its number.
func parseJSONImport(file io.Reader) iter.Seq2[chat.ImportRow, error] {
	return func(yield func(chat.ImportRow, error) bool) {
		notItems := &importProblem{words: "the file is not a JSON array of items with title, content, url, tags, questions and status"}
		dec := json.NewDecoder(file)
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			yield(chat.ImportRow{}, notItems)
			return
		}
		for n := 1; dec.More(); n++ {
			var in knowledgeInput
			if err := dec.Decode(&in); err != nil {
				yield(chat.ImportRow{}, notItems)
				return
			}
			if !yield(chat.ImportRow{Position: n, Input: in.input()}, nil) {
				return
			}
		}
		// The array ends, and nothing follows it.
		if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
			yield(chat.ImportRow{}, notItems)
			return
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			yield(chat.ImportRow{}, notItems)
		}
	}
}

// exportKnowledge downloads the whole knowledge base as JSON or CSV, in the formats import reads.
func (d *Dashboard) exportKnowledge(w http.ResponseWriter, r *http.Request, v *view) error {
	format := r.PathValue("format")
	if format != "json" && format != "csv" {
		return &userError{status: http.StatusNotFound, message: "Export as json or csv."}
	}
	err := d.chat.ExportKnowledge(r.Context(), v.merchant, func(items []store.Knowledge) error {
		name := fmt.Sprintf("knowledge-%s-%s.%s", v.merchant.MerchantID, d.now().UTC().Format("20060102"), format)
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		if format == "json" {
			type item struct {
				ID string `json:"id"`
				knowledgeInput
				CreatedAt time.Time `json:"created_at"`
				UpdatedAt time.Time `json:"updated_at"`
			}
			out := make([]item, len(items))
			for i, k := range items {
				out[i] = item{ID: k.ID, knowledgeInput: inputOf(k), CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt}
			}
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		cw := csv.NewWriter(w)
		_ = cw.Write(csvHeader)
		for _, k := range items {
			_ = cw.Write(csvRecord(k))
		}
		cw.Flush()
		return cw.Error()
	})
	if errors.Is(err, chat.ErrTooManyExports) {
		return tooManyExports(w)
	}
	return err
}

// csvRecord is an item as a line of the CSV export (csvHeader), which parseCSVImport reads back.
func csvRecord(k store.Knowledge) []string {
	return []string{csvSafe(k.Title), csvSafe(k.Content), csvSafe(k.URL), csvSafe(strings.Join(k.Tags, ",")),
		csvSafe(strings.Join(k.Questions, "\n")), chat.StatusOf(k)}
}

// orEmpty returns list, or an empty list for nil: an export writes a list it has none of as [].
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// uploadFiles makes items of uploaded files (chat.ImportFiles), all or none; a refusal names the file.
func (d *Dashboard) uploadFiles(w http.ResponseWriter, r *http.Request, v *view) error {
	var files []chat.KnowledgeFile
	if r.MultipartForm != nil {
		for _, h := range r.MultipartForm.File["file"] {
			body, err := readUpload(h)
			if err != nil {
				return err
			}
			files = append(files, chat.KnowledgeFile{Name: h.Filename, ContentType: h.Header.Get("Content-Type"), Body: body})
		}
	}
	if u := strings.TrimSpace(r.PostForm.Get("url")); u != "" {
		if len(files) != 1 {
			return d.knowledgePage(w, r, v, http.StatusUnprocessableEntity, []string{translate(v.lang, "An address is for one file: add that file alone with it.")})
		}
		files[0].URL = u
	}
	_, err := d.chat.ImportFiles(r.Context(), v.merchant, files)
	var (
		file    *chat.FileError
		limit   *chat.ImportLimitError
		ceiling *chat.ImportCeilingError
	)
	problem := func(status int, format string, args ...any) error {
		return d.knowledgePage(w, r, v, status, []string{fmt.Sprintf(translate(v.lang, format), args...),
			translate(v.lang, "Nothing was added.")})
	}
	switch {
	case err == nil:
		http.Redirect(w, r, prefix+"knowledge?ok=uploaded", http.StatusSeeOther)
		return nil
	case errors.Is(err, chat.ErrNoFiles):
		return problem(http.StatusBadRequest, "Choose one or more files to add.")
	case errors.As(err, &file) && errors.Is(err, ingest.ErrUnsupported):
		return problem(http.StatusUnsupportedMediaType, "%s: this type of file cannot be read. Add PDF, DOCX, HTML, Markdown, text or CSV files.", file.File)
	case errors.As(err, &file) && errors.Is(err, ingest.ErrNoText):
		return problem(http.StatusUnprocessableEntity, "%s: there is no text in it. A scanned PDF needs text recognition (OCR) first.", file.File)
	case errors.As(err, &file) && errors.Is(err, ingest.ErrTooLarge):
		return problem(http.StatusRequestEntityTooLarge, "%s: the file is too large to read.", file.File)
	case errors.As(err, &file) && errors.Is(err, ingest.ErrMalformed):
		return problem(http.StatusUnprocessableEntity, "%s: the file is damaged or not what its name says.", file.File)
	case errors.As(err, &file):
		return problem(http.StatusUnprocessableEntity, "%s: %s", file.File, file.Err.Error())
	case errors.As(err, &limit) && limit.Bound == chat.ImportBoundBytes:
		return problem(http.StatusRequestEntityTooLarge, "The files are larger than your plan's limit of %d KiB for an import.", limit.Limit>>10)
	case errors.As(err, &limit) && limit.Bound == chat.ImportBoundFiles:
		return problem(http.StatusUnprocessableEntity, "At most %d files can be added at once.", limit.Limit)
	case errors.As(err, &limit):
		return problem(http.StatusUnprocessableEntity, "The files make more than the %d items that can be imported at once.", limit.Limit)
	case errors.As(err, &ceiling) && errors.Is(err, store.ErrKnowledgeLimit):
		return problem(http.StatusConflict, "The %d items would pass your plan's limit of %d items.", ceiling.Items, v.merchant.Plan.KnowledgeItems)
	case errors.As(err, &ceiling) && errors.Is(err, store.ErrKnowledgeSizeLimit):
		return problem(http.StatusConflict, "The %d items would pass your plan's limit of %d characters of knowledge.", ceiling.Items, v.merchant.Plan.KnowledgeCharacters)
	}
	return err
}

// readUpload reads an uploaded file, which readForm bounded with the form.
func readUpload(h *multipart.FileHeader) ([]byte, error) {
	f, err := h.Open()
	if err != nil {
		return nil, fmt.Errorf("opening the upload %s: %w", h.Filename, err)
	}
	defer func() { _ = f.Close() }()
	body, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading the upload %s: %w", h.Filename, err)
	}
	return body, nil
}
