package transcript

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
)

// ReviewCSV writes the review queue for teams that work in a spreadsheet, one row a group, as the API's
// format=csv and the dashboard's download give it. Cells a spreadsheet would run as a formula are quoted with a
// leading apostrophe (CSV injection, OWASP): the questions and comments are visitors' text.
func ReviewCSV(w io.Writer, groups []chat.ReviewGroup) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"question", "asked", "unanswered", "thumbs_down", "low_confidence", "wordings", "answer",
		"confidence", "sources", "comments", "last_asked_at"})
	for _, g := range groups {
		wordings := make([]string, len(g.Questions))
		for i, q := range g.Questions {
			wordings[i] = q.Question
		}
		sources := make([]string, len(g.Latest.Sources))
		for i, src := range g.Latest.Sources {
			sources[i] = src.Title
		}
		row := []string{g.Question, strconv.Itoa(g.Asked), strconv.Itoa(g.Unanswered), strconv.Itoa(g.ThumbsDown),
			strconv.Itoa(g.LowConfidence), strings.Join(wordings, "\n"), g.Latest.Answer,
			strconv.FormatFloat(g.Latest.Confidence, 'f', 2, 64), strings.Join(sources, "\n"), strings.Join(g.Comments, "\n"),
			g.Latest.CreatedAt.UTC().Format(time.RFC3339)}
		for i, c := range row {
			row[i] = cell(c)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
