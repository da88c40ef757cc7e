package dashboard

import (
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// exportRetryAfter is what an owner refused an export (chat.ErrTooManyExports) is told to wait.
const exportRetryAfter = "10"

// exportLeads downloads the merchant's leads as CSV, newest first, written as the store reads them.
func (d *Dashboard) exportLeads(w http.ResponseWriter, r *http.Request, v *view) error {
	cw := csv.NewWriter(w)
	started := false
	// start begins the download; before it, a refused export is still a page.
	start := func() {
		started = true
		name := fmt.Sprintf("leads-%s-%s.csv", v.merchant.MerchantID, d.now().UTC().Format("20060102"))
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_ = cw.Write(leadsCSVHeader)
	}
	err := d.chat.ExportLeads(r.Context(), v.merchant, func(l store.Lead) error {
		if !started {
			start()
		}
		_ = cw.Write([]string{l.ID, l.CreatedAt.UTC().Format(time.RFC3339), csvSafe(l.Name), csvSafe(l.Email), csvSafe(l.Phone),
			csvSafe(l.Message), fmt.Sprint(l.Consent), l.Source, l.ConversationID})
		return cw.Error() // the client went away
	})
	switch {
	case errors.Is(err, chat.ErrTooManyExports):
		return tooManyExports(w)
	case err != nil && started:
		// Part of the file may be sent: cut the connection, so that the download fails rather than looks complete.
		d.log.ErrorContext(r.Context(), "exporting leads failed", "merchant", v.merchant.MerchantID, "error", err)
		panic(http.ErrAbortHandler)
	case err != nil:
		return err
	case !started: // no leads: the header line alone
		start()
	}
	cw.Flush()
	return cw.Error()
}

// tooManyExports refuses an export past chat.MaxExportsPerMerchant.
func tooManyExports(w http.ResponseWriter) error {
	w.Header().Set("Retry-After", exportRetryAfter)
	return &userError{status: http.StatusTooManyRequests,
		message: "Your merchant's owners are already downloading as many exports as they may at once. Try again when one has finished."}
}

// leadsCSVHeader is the first line of the leads' export.
var leadsCSVHeader = []string{"id", "created_at", "name", "email", "phone", "message", "consent", "source", "conversation_id"}

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
