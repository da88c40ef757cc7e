package dashboard

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"
)

// maxFieldsBytes bounds what of a form is read before its CSRF token is checked: a URL-encoded form whole (a
// knowledge item's longest, percent-encoded, is about 300 KB), and the parts of a multipart one before its file.
const maxFieldsBytes = 1 << 20

// errForged is a form without the session's CSRF token, or with its token after its file.
var errForged = errors.New("the form does not carry the session's CSRF token")

// refuseUnread ends a request whose body will not be read: the connection is closed after the answer rather than
// drained for the next request, and reading from it stops now, so that a body sent however slowly holds nothing
// of the runtime's but the answer's time.
func refuseUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now()) // not every writer has a deadline: best effort
}

// readForm reads the form a signed-in user posted, checking that it carries s's CSRF token before reading more
// than maxFieldsBytes of it: a URL-encoded form is read whole within that bound; a multipart one (an import) part
// by part, and its token must come before its file, which is read afterwards, up to maxFormBytes in all. The
// form is then in r.PostForm and r.Form and, for a multipart one, its files in r.MultipartForm. The error is
// errForged, a *http.MaxBytesError, or what made the form unreadable.
func readForm(w http.ResponseWriter, r *http.Request, s session) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxFieldsBytes)
		if err := r.ParseForm(); err != nil {
			return err
		}
		if !validCSRF(s, r) {
			return errForged
		}
		return nil
	}
	body := http.MaxBytesReader(w, r.Body, maxFormBytes)
	unchecked := &io.LimitedReader{R: body, N: maxFieldsBytes}
	r.Body = struct {
		io.Reader
		io.Closer
	}{unchecked, body}
	mr, err := r.MultipartReader()
	if err != nil {
		return err
	}
	fields := url.Values{}
	for checked := false; !checked; {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return errForged
		}
		if err != nil {
			return tooLargeOr(err, unchecked)
		}
		if p.FileName() != "" {
			return errForged
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return tooLargeOr(err, unchecked)
		}
		fields.Add(p.FormName(), string(v))
		if p.FormName() == "csrf" {
			if !sameToken(s, string(v)) {
				return errForged
			}
			checked = true
		}
	}
	// The sender is the session's: the rest, its file, may be as large as a form may be.
	unchecked.N = maxFormBytes
	form, err := mr.ReadForm(maxFormBytes)
	if err != nil {
		return err
	}
	for name, values := range fields {
		form.Value[name] = append(values, form.Value[name]...)
	}
	r.MultipartForm = form
	r.PostForm = url.Values(form.Value)
	r.Form = r.URL.Query()
	for name, values := range r.PostForm {
		r.Form[name] = append(values, r.Form[name]...)
	}
	return nil
}

// tooLargeOr is err, or a *http.MaxBytesError when err comes from the fields before the token passing
// maxFieldsBytes.
func tooLargeOr(err error, unchecked *io.LimitedReader) error {
	if unchecked.N <= 0 {
		return &http.MaxBytesError{Limit: maxFieldsBytes}
	}
	return err
}

// formRefusal is the status and words of a form readForm refused.
func formRefusal(err error) (int, string) {
	switch mbe := (*http.MaxBytesError)(nil); {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, "What you sent is too large."
	case errors.Is(err, errForged):
		return http.StatusForbidden, "This form expired or came from elsewhere, so nothing was changed. Reload the page and try again."
	default:
		return http.StatusBadRequest, "This form could not be read, so nothing was changed. Reload the page and try again."
	}
}
