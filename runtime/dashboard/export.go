package dashboard

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/transcript"
)

// exportConversations downloads the merchant's conversations of the page's dates (from and to, as the
// conversations page takes them) with their messages, in format, newest first, written as the store reads them.
func (d *Dashboard) exportConversations(format string) func(http.ResponseWriter, *http.Request, *view) error {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		q := r.URL.Query()
		from, err := dateParam(q, "from", 0)
		if err != nil {
			return err
		}
		to, err := dateParam(q, "to", 1)
		if err != nil {
			return err
		}
		var tw transcript.Writer
		// start begins the download; before it, a refused export is still a page.
		start := func() (err error) {
			name := fmt.Sprintf("conversations-%s-%s.%s", v.merchant.MerchantID, d.now().UTC().Format("20060102"), format)
			w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
			w.Header().Set("Content-Type", transcript.ContentType(format))
			tw, err = transcript.New(w, format)
			return err
		}
		err = d.chat.ExportConversations(r.Context(), v.merchant, from, to, func(c store.Conversation, msgs []store.Message) error {
			if tw == nil {
				if err := start(); err != nil {
					return err
				}
			}
			return tw.Write(c, msgs) // an error: the client went away
		})
		switch {
		case errors.Is(err, chat.ErrTooManyExports):
			return tooManyExports(w)
		case err != nil && tw != nil:
			// Part of the file may be sent: cut the connection, so that the download fails rather than looks complete.
			d.log.ErrorContext(r.Context(), "exporting conversations failed", "merchant", v.merchant.MerchantID, "error", err)
			panic(http.ErrAbortHandler)
		case err != nil:
			return err
		case tw == nil: // no conversations: an empty file, or the CSV header line alone
			if err := start(); err != nil {
				return err
			}
		}
		return tw.Close()
	}
}
