package dashboard_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// upload posts a file to the import form, as the page does.
func (c *client) upload(token, name, content string) reply {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", token)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write([]byte(content))
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.base+"/dashboard/knowledge/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", c.base)
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return reply{StatusCode: res.StatusCode, Header: res.Header, URL: req.URL, Body: b.String()}
}

func TestKnowledgeImportAndExport(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()

	for _, tc := range []struct{ name, file, content, want string }{
		{"no header", "a.csv", "Hours,Open 9 to 5\n", "the first line must name the columns"},
		{"not JSON", "a.json", "[{", "not a JSON array"},
		{"a bad URL", "a.json", `[{"title": "A", "content": "B", "url": "javascript:alert(1)"}]`, "Item 1: the URL must be an absolute http or https address"},
		// A JSON array's blank tag is refused, as the API refuses it.
		{"a blank tag", "a.json", `[{"title": "A", "content": "B", "tags": ["a", " "]}]`, "Item 1: a tag is empty"},
		{"a long title", "a.csv", "title,content\n" + strings.Repeat("t", 201) + ",c\n", "Line 2: the title is longer than 200 characters"},
		{"empty", "a.csv", "title,content\n", "The file has no items."},
		// alpha has 2 of 5 items: 4 more pass the limit.
		{"past the plan's limit", "a.csv", "title,content\nA,a\nB,b\nC,c\nD,d\n", "The 4 items would pass your plan&#39;s limit of 5 items."},
	} {
		res := c.upload(token, tc.file, tc.content)
		if res.StatusCode < 400 || !strings.Contains(res.Body, tc.want) {
			t.Errorf("%s: %d, want %q in the page", tc.name, res.StatusCode, tc.want)
		}
		if n := e.knowledgeCount(t, "alpha"); n != 2 {
			t.Fatalf("%s: alpha has %d items, want 2", tc.name, n)
		}
	}

	res := c.upload(token, "items.json", `[{"title": "Opening hours", "content": "We are open 9 to 5.", "tags": ["store"]},
		{"title": "Parking", "content": "Free parking behind the store.", "url": "https://alpha.example/parking"}]`)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a good JSON import: %d %s", res.StatusCode, res.Body)
	}
	if n := e.knowledgeCount(t, "alpha"); n != 4 {
		t.Fatalf("after the import alpha has %d items, want 4", n)
	}

	// The export is what an import reads back.
	exp := c.get("/dashboard/knowledge/export/csv")
	if exp.StatusCode != http.StatusOK || !strings.Contains(exp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("the CSV export: %d %v", exp.StatusCode, exp.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(exp.Body)).ReadAll()
	if err != nil || len(rows) != 5 || strings.Join(rows[0], ",") != "title,content,url,tags,questions,status" {
		t.Fatalf("the CSV export: %v %q", err, exp.Body)
	}
	if !strings.Contains(exp.Body, "Parking,Free parking behind the store.,https://alpha.example/parking,,,published") {
		t.Errorf("the CSV export lacks the imported item: %s", exp.Body)
	}
	if j := c.get("/dashboard/knowledge/export/json"); !strings.Contains(j.Body, `"title": "Opening hours"`) {
		t.Errorf("the JSON export: %s", j.Body)
	}

	// Editing and deleting.
	if res := c.post("/dashboard/knowledge/kn_alpha_0", url.Values{"csrf": {token}, "title": {""}, "content": {"x"}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.Body, "the title is missing") || !strings.Contains(res.Body, `>x</textarea>`) {
		t.Errorf("an edit without a title: %d", res.StatusCode)
	}
	if res := c.post("/dashboard/knowledge/kn_alpha_0?lang=de", url.Values{"csrf": {token}, "title": {"x"}, "content": {"\x00"}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.Body, "der Inhalt enthält Zeichen, die nicht gespeichert werden können") {
		t.Errorf("an edit with NUL, in German: %d", res.StatusCode)
	}
	// The form's comma-separated tags drop the blanks of the splitting.
	if res := c.post("/dashboard/knowledge/kn_alpha_0?lang=en", url.Values{"csrf": {token}, "title": {"Shipping"}, "content": {"Ships in a day."},
		"tags": {"shipping, ,returns,"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("an edit: %d", res.StatusCode)
	}
	if k, err := e.store.GetKnowledge(t.Context(), "alpha", "kn_alpha_0"); err != nil || k.Content != "Ships in a day." || strings.Join(k.Tags, "|") != "shipping|returns" {
		t.Errorf("after the edit: %+v %v", k, err)
	}
	if res := c.post("/dashboard/knowledge/kn_alpha_0/delete", url.Values{"csrf": {token}}); res.StatusCode != http.StatusSeeOther || e.knowledgeCount(t, "alpha") != 3 {
		t.Errorf("deleting: %d", res.StatusCode)
	}
	if res := c.get("/dashboard/knowledge/kn_alpha_0"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted item: %d", res.StatusCode)
	}
}

// A browser sends a textarea's line breaks as CRLF (the HTML form encoding): they are stored as the LF they are on
// the page, so an item as long as the limit allows, its breaks counted once as the page counts them, is saved,
// and saving an item unchanged changes nothing.
func TestKnowledgeFormKeepsLineBreaks(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	long := strings.Repeat(strings.Repeat("a", 1999)+"\n", 9) + strings.Repeat("a", 2000) // 20,000 characters, the most an item holds
	for i, content := range []string{"line 1\nline 2\nline 3", long} {
		title := fmt.Sprint("Breaks ", i)
		sent := strings.ReplaceAll(content, "\n", "\r\n")
		if res := c.post("/dashboard/knowledge", url.Values{"csrf": {c.csrf()}, "title": {title}, "content": {sent}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("saving %d characters with CRLF: %d", len(content), res.StatusCode)
		}
		all, err := e.store.AllKnowledge(t.Context(), "alpha")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(all, func(k store.Knowledge) bool { return k.Title == title })
		if i < 0 || all[i].Content != content {
			t.Errorf("%s: not stored with LF line breaks", title)
		}
	}
}

// An import past the size limit is told so (413), not taken for a forged form because its token came after the
// limit; nothing is imported.
func TestImportTooLarge(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	res := c.upload(c.csrf(), "big.csv", "title,content\n"+strings.Repeat("A,"+strings.Repeat("a", 1000)+"\n", 5000))
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(res.Body, "too large") {
		t.Errorf("a 5 MB import: %d, want 413 saying it is too large", res.StatusCode)
	}
	if n := e.knowledgeCount(t, "alpha"); n != 2 {
		t.Errorf("alpha has %d items, want its 2", n)
	}
}

// A knowledge item that reads as a spreadsheet formula is exported as text (a leading apostrophe, as the leads'
// export does) and imports back as it was.
func TestKnowledgeExportKeepsFormulasText(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	formula := `=HYPERLINK("https://evil.example","click")`
	if res := c.post("/dashboard/knowledge", url.Values{"csrf": {c.csrf()}, "title": {formula}, "content": {"+1+2 is three"},
		"tags": {"@SUM(1)"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("adding the item: %d", res.StatusCode)
	}
	exp := c.get("/dashboard/knowledge/export/csv").Body
	rows, err := csv.NewReader(strings.NewReader(exp)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
				t.Errorf("exported cell %q reads as a formula", cell)
			}
		}
	}
	// The plan holds 5 items: the export's header and the formula's row are imported back.
	var back strings.Builder
	cw := csv.NewWriter(&back)
	for _, row := range rows {
		if row[0] == "title" || strings.Contains(row[0], "HYPERLINK") {
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	if res := c.upload(c.csrf(), "export.csv", back.String()); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("importing the export: %d %s", res.StatusCode, res.Body)
	}
	all, err := e.store.AllKnowledge(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range all {
		if k.Title == formula {
			n++
			if k.Content != "+1+2 is three" || strings.Join(k.Tags, ",") != "@SUM(1)" {
				t.Errorf("imported back as %q, %q", k.Content, k.Tags)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d items titled %q after importing the export, want the item and its copy", n, formula)
	}
}

// An import's problems are told in the page's language, the parser's own detail aside.
func TestKnowledgeImportProblemsInGerman(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	c.get("/dashboard/?lang=de") // the choice is kept in a cookie
	for _, tc := range []struct{ file, content, want string }{
		{"a.csv", "", "die Datei ist leer"},
		{"a.csv", "title,Title,content\nA,B,C\n", "die erste Zeile nennt eine Spalte zweimal: title"},
		{"a.csv", "Hours,Open\n", "die erste Zeile muss die Spalten nennen"},
		{"a.csv", "title,content\n\"A,b\n", "die Datei ist kein gültiges CSV: "},
		{"a.json", "[{", "die Datei ist kein JSON-Array"},
		{"a.csv", "title,content\n,b\n", "Zeile 2: der Titel fehlt"},
		{"a.json", `[{"title": "A", "content": ""}]`, "Eintrag 1: der Inhalt fehlt"},
	} {
		if res := c.upload(c.csrf(), tc.file, tc.content); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.Body, tc.want) {
			t.Errorf("%q: %d, want %q in the page", tc.content, res.StatusCode, tc.want)
		}
	}
}

// TestKnowledgeQuestions checks an item's questions in the dashboard: the form takes them one a line and shows
// them again, an import reads them from a CSV cell or a JSON list, and the export writes what the import reads.
func TestKnowledgeQuestions(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()

	res := c.post("/dashboard/knowledge/kn_alpha_0?lang=en", url.Values{"csrf": {token}, "title": {"Opening hours"},
		"content": {"Open 9 to 5."}, "questions": {"When do you close?\r\n\r\n  Are you open on   Sundays? \r\n"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("an edit with questions: %d %s", res.StatusCode, res.Body)
	}
	k, err := e.store.GetKnowledge(t.Context(), "alpha", "kn_alpha_0")
	if err != nil || strings.Join(k.Questions, "|") != "When do you close?|Are you open on Sundays?" {
		t.Fatalf("after the edit: %q %v", k.Questions, err)
	}
	if page := c.get("/dashboard/knowledge/kn_alpha_0"); !strings.Contains(page.Body, ">When do you close?\nAre you open on Sundays?</textarea>") {
		t.Errorf("the form does not show the questions: %s", page.Body)
	}
	if res := c.post("/dashboard/knowledge/kn_alpha_0?lang=de", url.Values{"csrf": {token}, "title": {"x"}, "content": {"y"},
		"questions": {strings.Repeat("q", 201)}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.Body, "eine Frage ist länger als 200 Zeichen") {
		t.Errorf("a long question, in German: %d", res.StatusCode)
	}

	exp := c.get("/dashboard/knowledge/export/csv")
	rows, err := csv.NewReader(strings.NewReader(exp.Body)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("the CSV export: %v %q", err, exp.Body)
	}
	var exported []string
	for _, row := range rows[1:] {
		if row[0] == "Opening hours" {
			exported = row
		}
	}
	if len(exported) != 6 || exported[4] != "When do you close?\nAre you open on Sundays?" {
		t.Fatalf("the CSV export's row: %q", exported)
	}
	// Deleted and imported again from the export's row, then from JSON.
	if res := c.post("/dashboard/knowledge/kn_alpha_0/delete", url.Values{"csrf": {token}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("deleting: %d", res.StatusCode)
	}
	var file strings.Builder
	w := csv.NewWriter(&file)
	_ = w.WriteAll([][]string{rows[0], exported})
	if res := c.upload(token, "items.csv", file.String()); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("importing the exported row: %d %s", res.StatusCode, res.Body)
	}
	if res := c.upload(token, "items.json", `[{"title": "Parking", "content": "Behind the shop.", "questions": ["Where can I park?"]}]`); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a JSON import with questions: %d %s", res.StatusCode, res.Body)
	}
	items, err := e.store.AllKnowledge(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range items {
		got[k.Title] = strings.Join(k.Questions, "|")
	}
	if got["Opening hours"] != "When do you close?|Are you open on Sundays?" || got["Parking"] != "Where can I park?" {
		t.Errorf("imported questions: %q", got)
	}
	if res := c.upload(token, "items.json", `[{"title": "A", "content": "B", "questions": ["ok", ""]}]`); res.StatusCode < 400 ||
		!strings.Contains(res.Body, "Eintrag 1: eine Frage ist leer") { // the language chosen above
		t.Errorf("a JSON import with a blank question: %d %s", res.StatusCode, res.Body)
	}
}

// TestAnsweringAnUnansweredQuestion follows an unanswered question from the overview to the item that answers
// it: the overview links it, the knowledge page offers the items that may answer it and a new item with it, the
// item's form adds it to its questions, and once saved the next visitor asking it is answered.
func TestAnsweringAnUnansweredQuestion(t *testing.T) {
	e := newEnv(t)
	const asked = "Do parcels reach Canada before Christmas?"
	answer, conv := e.chat(t, "alpha", asked)
	if strings.Contains(answer, "business days") {
		t.Fatalf("answered before the question was listed: %q", answer)
	}
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()

	const normalised = "do parcels reach canada before christmas"
	link := "/dashboard/knowledge?question=" + url.QueryEscape(normalised)
	if page := c.get("/dashboard/"); !strings.Contains(page.Body, `href="`+strings.ReplaceAll(link, "+", "%20")+`#answer"`) {
		t.Fatalf("the overview does not link the unanswered question to %s: %s", link, page.Body)
	}
	// The conversation links its unanswered question too, as the visitor wrote it.
	if page := c.get("/dashboard/conversations/" + conv); !strings.Contains(strings.ToLower(page.Body), // %3f or %3F
		strings.ToLower(`href="/dashboard/knowledge?question=`+strings.ReplaceAll(url.QueryEscape(asked), "+", "%20")+`#answer"`)) {
		t.Errorf("the conversation does not link its unanswered question: %s", page.Body)
	}
	page := c.get(link)
	edit := `/dashboard/knowledge/kn_alpha_0?question=` + strings.ReplaceAll(url.QueryEscape(normalised), "+", "%20")
	if page.StatusCode != http.StatusOK || !strings.Contains(page.Body, "Answer “"+normalised+"”") ||
		!strings.Contains(page.Body, `href="`+edit+`">Shipping alpha</a>`) || !strings.Contains(page.Body, ">"+normalised+"</textarea>") {
		t.Fatalf("the knowledge page for the question: %d %s", page.StatusCode, page.Body)
	}
	form := c.get(edit)
	if !strings.Contains(form.Body, ">"+normalised+"</textarea>") || !strings.Contains(form.Body, `id="question-added"`) {
		t.Fatalf("the item's form does not add the question: %s", form.Body)
	}
	k, err := e.store.GetKnowledge(t.Context(), "alpha", "kn_alpha_0")
	if err != nil || len(k.Questions) != 0 {
		t.Fatalf("the question was saved before the form was: %q %v", k.Questions, err)
	}
	if res := c.post("/dashboard/knowledge/kn_alpha_0", url.Values{"csrf": {token}, "title": {k.Title}, "content": {k.Content},
		"questions": {normalised}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving: %d %s", res.StatusCode, res.Body)
	}
	if answer, _ := e.chat(t, "alpha", asked); !strings.Contains(answer, "business days") {
		t.Errorf("not answered from the item once the question was listed: %q", answer)
	}
	// Listed already: the form shows it once. Not a question one could list: no offer at all.
	if form := c.get(edit); strings.Count(form.Body, normalised) != 1 || strings.Contains(form.Body, `id="question-added"`) {
		t.Errorf("a question listed already is added again: %s", form.Body)
	}
	for _, bad := range []string{url.QueryEscape(strings.Repeat("q", 201)), "%20%20"} {
		if page := c.get("/dashboard/knowledge?question=" + bad); page.StatusCode != http.StatusOK || strings.Contains(page.Body, `id="answer"`) {
			t.Errorf("question=%s: %d, offered", bad, page.StatusCode)
		}
	}
	// Not text at all: the address is refused, as every page's is (TestDashboardRefusesUnreadableAddresses).
	if page := c.get("/dashboard/knowledge?question=a%00b"); page.StatusCode != http.StatusBadRequest || strings.Contains(page.Body, `id="answer"`) {
		t.Errorf("question=a%%00b: %d, want 400", page.StatusCode)
	}
}

// TestKnowledgeCharactersCeilingInDashboard checks that an item or an import past the plan's characters ceiling
// is refused with the form or the page saying why, as the item ceiling is, not with an error page; and that an
// item listing the most questions it may is not offered one more.
func TestKnowledgeCharactersCeilingInDashboard(t *testing.T) {
	e := newEnv(t)
	b, _ := e.tenants.Merchant("alpha")
	capped := *b
	capped.Plan.KnowledgeCharacters = 300
	bundletest.Publish(t, e.tenants, "test/alpha", &capped)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()
	k, err := e.store.GetKnowledge(t.Context(), "alpha", "kn_alpha_0")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("How long does shipping take to Toronto? ", 4)
	res := c.post("/dashboard/knowledge/kn_alpha_0?lang=en", url.Values{"csrf": {token}, "title": {k.Title}, "content": {k.Content},
		"questions": {long}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(res.Body, "the item would pass your plan&#39;s limit of 300 characters of knowledge") ||
		!strings.Contains(res.Body, strings.TrimSpace(long)+"</textarea>") {
		t.Errorf("an edit past the characters ceiling: %d %s", res.StatusCode, res.Body)
	}
	res = c.post("/dashboard/knowledge", url.Values{"csrf": {token}, "title": {"Big"}, "content": {strings.Repeat("c", 250)}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(res.Body, "limit of 300 characters") {
		t.Errorf("a new item past the characters ceiling: %d", res.StatusCode)
	}
	res = c.upload(token, "k.csv", "title,content,questions\nA,B,"+strings.Repeat("q", 150)+"\nC,D,"+strings.Repeat("q", 150)+"\n")
	if res.StatusCode != http.StatusConflict || !strings.Contains(res.Body, "The 2 items would pass your plan&#39;s limit of 300 characters of knowledge. Nothing was imported.") {
		t.Errorf("an import past the characters ceiling: %d", res.StatusCode)
	}
	if after, _ := e.store.GetKnowledge(t.Context(), "alpha", "kn_alpha_0"); len(after.Questions) != 0 || e.knowledgeCount(t, "alpha") != 2 {
		t.Errorf("something was written past the ceiling: %q, %d items", after.Questions, e.knowledgeCount(t, "alpha"))
	}

	// An item that lists 20 questions is not offered a 21st, which it could not save; nor one it lists in
	// another case.
	k.Questions = make([]string, chat.MaxQuestions)
	for i := range k.Questions {
		k.Questions[i] = fmt.Sprintf("q%d", i)
	}
	capped.Plan.KnowledgeCharacters = 0
	bundletest.Publish(t, e.tenants, "test/alpha", &capped)
	if _, err := e.svc.UpdateKnowledge(t.Context(), &capped, k, k); err != nil {
		t.Fatal(err)
	}
	form := c.get("/dashboard/knowledge/kn_alpha_0?question=" + url.QueryEscape("do parcels reach toronto"))
	if !strings.Contains(form.Body, `id="questions-full"`) || strings.Contains(form.Body, `id="question-added"`) ||
		strings.Contains(form.Body, "do parcels reach toronto\n") || strings.Contains(form.Body, "\ndo parcels reach toronto<") {
		t.Errorf("an item of 20 questions is offered a 21st: %s", form.Body)
	}
	if form := c.get("/dashboard/knowledge/kn_alpha_0?question=Q3"); strings.Contains(form.Body, `id="question-added"`) {
		t.Errorf("a question listed in another case is added again")
	}
}

// TestKnowledgeDrafts: the item form keeps an item as a draft and publishes it again, the list marks and filters
// drafts, and a CSV import and export carry the status.
func TestKnowledgeDrafts(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()
	draft := func(id string) bool {
		t.Helper()
		k, err := e.store.GetKnowledge(t.Context(), "alpha", id)
		if err != nil {
			t.Fatal(err)
		}
		return k.Draft
	}

	item := url.Values{"csrf": {token}, "title": {"Returns alpha"}, "content": {"Return within 60 days."}}
	item.Set("status", "draft")
	if res := c.post("/dashboard/knowledge/kn_alpha_1", item); res.StatusCode != http.StatusSeeOther || !draft("kn_alpha_1") {
		t.Fatalf("saved with the draft box ticked: %d, draft %v", res.StatusCode, draft("kn_alpha_1"))
	}
	if page := c.get("/dashboard/knowledge/kn_alpha_1"); !strings.Contains(page.Body, `value="draft" checked`) {
		t.Errorf("the form of a draft does not tick the box: %s", page.Body)
	}
	list := c.get("/dashboard/knowledge")
	if !strings.Contains(list.Body, `Returns alpha</a> <span class="tag warn">Draft</span>`) {
		t.Errorf("the list does not mark the draft: %s", list.Body)
	}
	for status, want := range map[string][]string{"draft": {"Returns alpha"}, "published": {"Shipping alpha"}, "": {"Returns alpha", "Shipping alpha"},
		"nonsense": {"Returns alpha", "Shipping alpha"}} {
		page := c.get("/dashboard/knowledge?status=" + status).Body
		for _, title := range []string{"Returns alpha", "Shipping alpha"} {
			if listed := strings.Contains(page, ">"+title+"</a>"); listed != slices.Contains(want, title) {
				t.Errorf("status=%s: %q listed %v", status, title, listed)
			}
		}
	}
	item.Del("status") // an unticked box sends nothing
	if res := c.post("/dashboard/knowledge/kn_alpha_1", item); res.StatusCode != http.StatusSeeOther || draft("kn_alpha_1") {
		t.Errorf("saved without the box: %d, still a draft", res.StatusCode)
	}

	if res := c.upload(token, "a.csv", "title,content,status\nGift cards,Coming soon.,Draft\n"); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.Body, "Line 2: the status must be published or draft") {
		t.Errorf("an unknown status in a CSV file: %d %s", res.StatusCode, res.Body)
	}
	if res := c.upload(token, "a.csv", "title,content,status\nGift cards,Coming soon.,draft\nHours,Open 9 to 5.,\n"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a CSV import with a status column: %d %s", res.StatusCode, res.Body)
	}
	exp := c.get("/dashboard/knowledge/export/csv").Body
	for _, line := range []string{"Gift cards,Coming soon.,,,,draft", "Hours,Open 9 to 5.,,,,published"} {
		if !strings.Contains(exp, line) {
			t.Errorf("the CSV export lacks %q: %s", line, exp)
		}
	}
	if j := c.get("/dashboard/knowledge/export/json").Body; !strings.Contains(j, `"status": "draft"`) || !strings.Contains(j, `"status": "published"`) {
		t.Errorf("the JSON export: %s", j)
	}
	if page := c.get("/dashboard/knowledge?lang=de&status=draft").Body; !strings.Contains(page, `<span class="tag warn">Entwurf</span>`) ||
		!strings.Contains(page, `<option value="draft" selected>Entwürfe</option>`) {
		t.Errorf("the German list: %s", page)
	}
}

// withPlan publishes the merchant again with its plan changed by change.
func (e *env) withPlan(t *testing.T, merchant string, change func(*tenant.Plan)) {
	t.Helper()
	b, _ := e.tenants.Merchant(merchant)
	next := *b
	change(&next.Plan)
	bundletest.Publish(t, e.tenants, "test/"+merchant, &next)
}

// A file of many bad rows, the attack of a file of empty rows, is answered with a short page: the first rows'
// problems and how many more there are.
func TestImportProblemsAreBoundedInDashboard(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	res := c.upload(c.csrf(), "empty.csv", "title,content\n"+strings.Repeat(",\n", 900))
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("an import of empty rows: %d", res.StatusCode)
	}
	listed := strings.Count(res.Body, "the title is missing")
	if listed != chat.MaxImportProblems || !strings.Contains(res.Body, "Line 2: the title is missing") ||
		!strings.Contains(res.Body, fmt.Sprintf("%d more rows have problems.", 900-chat.MaxImportProblems)) ||
		!strings.Contains(res.Body, "Nothing was imported.") {
		t.Errorf("%d problems listed, want %d and how many more: %s", listed, chat.MaxImportProblems, res.Body)
	}
	if n := e.knowledgeCount(t, "alpha"); n != 2 {
		t.Errorf("alpha has %d items, want its 2", n)
	}
}

// The plan's items and bytes of one import bound an upload: past either, the page says which and nothing is
// imported; within both, the file is imported.
func TestImportBoundsOfThePlanInDashboard(t *testing.T) {
	e := newEnv(t)
	e.withPlan(t, "alpha", func(p *tenant.Plan) { p.ImportItems, p.ImportBytes = 2, 2048 })
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()
	for _, tc := range []struct {
		name, file, content string
		status              int
		want                string
	}{
		{"rows", "a.csv", "title,content\nA,a\nB,b\nC,c\n", http.StatusUnprocessableEntity, "At most 2 items can be imported at once."},
		{"empty rows", "a.csv", "title,content\n" + strings.Repeat(",\n", 500), http.StatusUnprocessableEntity, "At most 2 items can be imported at once."},
		{"JSON items", "a.json", `[{"title": "A", "content": "a"}, {}, {}]`, http.StatusUnprocessableEntity, "At most 2 items can be imported at once."},
		{"bytes", "a.csv", "title,content\nA," + strings.Repeat("a", 2048) + "\n", http.StatusRequestEntityTooLarge,
			"The file is larger than your plan&#39;s limit of 2 KiB for an import. Nothing was imported."},
	} {
		if res := c.upload(token, tc.file, tc.content); res.StatusCode != tc.status || !strings.Contains(res.Body, tc.want) {
			t.Errorf("%s: %d, want %d with %q", tc.name, res.StatusCode, tc.status, tc.want)
		}
	}
	if n := e.knowledgeCount(t, "alpha"); n != 2 {
		t.Fatalf("alpha has %d items after refused imports, want its 2", n)
	}
	if res := c.upload(token, "a.csv", "title,content\nA,a\nB,"+strings.Repeat("b", 1900)+"\n"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("an import within the plan's bounds: %d %s", res.StatusCode, res.Body)
	}
	if n := e.knowledgeCount(t, "alpha"); n != 4 {
		t.Errorf("alpha has %d items after the import, want 4", n)
	}
}
