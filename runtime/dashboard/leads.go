package dashboard

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// maxExportLeads bounds a lead export.
const maxExportLeads = 50000

// exportLeads downloads the merchant's leads as CSV, newest first.
func (d *Dashboard) exportLeads(w http.ResponseWriter, r *http.Request, v *view) error {
	var all []store.Lead
	cursor := ""
	for len(all) < maxExportLeads {
		page, next, err := d.store.ListLeads(r.Context(), v.merchant.MerchantID, store.LeadFilter{Limit: 100, Cursor: cursor})
		if err != nil {
			return err
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	name := fmt.Sprintf("leads-%s-%s.csv", v.merchant.MerchantID, d.now().UTC().Format("20060102"))
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "created_at", "name", "email", "phone", "message", "consent", "source", "conversation_id"})
	for _, l := range all {
		_ = cw.Write([]string{l.ID, l.CreatedAt.UTC().Format(time.RFC3339), csvSafe(l.Name), csvSafe(l.Email), csvSafe(l.Phone),
			csvSafe(l.Message), fmt.Sprint(l.Consent), l.Source, l.ConversationID})
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a spreadsheet from reading text a visitor, or anyone holding a key, wrote as a formula: a cell
// that starts as one does gets a leading apostrophe, which spreadsheets show as text. A cell that starts with an
// apostrophe gets one more, which spreadsheets hide, so that fromCSVSafe gives it back as it was.
func csvSafe(s string) string {
	if formulaStart(s) || strings.HasPrefix(s, "'") {
		return "'" + s
	}
	return s
}

// fromCSVSafe undoes csvSafe, so that a knowledge export imports back as it was: it takes off the apostrophe
// before a formula's first character or before another apostrophe. Other text keeps a leading apostrophe.
func fromCSVSafe(s string) string {
	if rest, ok := strings.CutPrefix(s, "'"); ok && (formulaStart(rest) || strings.HasPrefix(rest, "'")) {
		return rest
	}
	return s
}

// formulaStart reports whether a spreadsheet would read a cell of s as a formula.
func formulaStart(s string) bool {
	return s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0]))
}
