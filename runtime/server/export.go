package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/transcript"
)

// exportConversations answers the merchant's conversations created in [from, to) with their messages, newest
// first, as JSON Lines (the default) or CSV, written as the store reads them. A failure once the file has started
// cuts the connection, so that the download fails rather than looks complete.
func (s *Server) exportConversations(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	format := q.Get("format")
	if format == "" {
		format = transcript.JSONL
	}
	if !slices.Contains(transcript.Formats, format) {
		return newError(http.StatusBadRequest, codeInvalidRequest, "format must be one of %s", strings.Join(transcript.Formats, ", "))
	}
	from, to, err := timeRange(q)
	if err != nil {
		return err
	}
	var tw transcript.Writer
	err = s.chat.ExportConversations(r.Context(), m, from, to, func(c store.Conversation, msgs []store.Message) error {
		if tw == nil {
			if tw, err = startTranscript(w, m, format, s.now().UTC().Format("20060102")); err != nil {
				return err
			}
		}
		return tw.Write(c, msgs)
	})
	switch {
	case err != nil && tw != nil:
		logger(r).Error("exporting conversations failed", "merchant", m.MerchantID, "error", err)
		panic(http.ErrAbortHandler)
	case err != nil:
		return err
	case tw == nil: // no conversations: an empty file (CSV: its header line)
		if tw, err = startTranscript(w, m, format, s.now().UTC().Format("20060102")); err != nil {
			return err
		}
	}
	return tw.Close()
}

// startTranscript sends the headers of a download and returns its writer.
func startTranscript(w http.ResponseWriter, m *tenant.Bundle, format, day string) (transcript.Writer, error) {
	h := w.Header()
	h.Set("Content-Type", transcript.ContentType(format))
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="conversations-%s-%s.%s"`, m.MerchantID, day, format))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return transcript.New(w, format)
}
