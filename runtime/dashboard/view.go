package dashboard

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// view is what a handler knows about the request's user: their session, the merchants they own, the one chosen
// (nil before one is), and the language of the pages.
type view struct {
	session   session
	owned     []*tenant.Bundle
	merchant  *tenant.Bundle
	lang      string
	signedOut bool
}

// handler is a dashboard handler; an error it returns is shown as a page (see fail).
type handler func(w http.ResponseWriter, r *http.Request, v *view) error

// userError is a problem with what the user sent, shown to them as it is.
type userError struct {
	status  int
	message string
}

func (e *userError) Error() string { return e.message }

func badRequest(format string, args ...any) error {
	return &userError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

// signedIn runs h for a signed-in user, and sends anyone else to sign in first.
func (d *Dashboard) signedIn(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := d.session(r)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if !ok {
			http.Redirect(w, r, prefix+"login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		d.run(w, r, d.newView(r, s), h)
	})
}

// page runs h for a signed-in owner with the merchant they chose: the only one they own, or the one picked on
// the merchants page.
func (d *Dashboard) page(h handler) http.Handler {
	return d.signedIn(func(w http.ResponseWriter, r *http.Request, v *view) error {
		if len(v.owned) == 0 {
			return &userError{status: http.StatusForbidden, message: "You are not an owner of any merchant on this runtime. Ask your platform team to add your email to the Merchant's owners."}
		}
		if v.merchant == nil && len(v.owned) == 1 {
			v.merchant = v.owned[0]
			v.session.Merchant = v.merchant.MerchantID
			if err := d.cookies.saveSession(w, v.session); err != nil {
				return fmt.Errorf("sealing the session: %w", err)
			}
		}
		if v.merchant == nil {
			http.Redirect(w, r, prefix+"merchants?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return nil
		}
		if err := d.limit(w, r, v.merchant); err != nil {
			return err
		}
		return h(w, r, v)
	})
}

// change runs h for a form post of a signed-in user. Who sends it is known before its body is read: cross-site
// requests (by the browser's Sec-Fetch-Site or Origin header) and requests without a session are refused unread,
// and a form is read only as far as its CSRF token until the token is checked (readForm). So nobody but the
// runtime's signed-in owners can make it hold a form's body.
func (d *Dashboard) change(h handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refuseUnread(w)
		d.renderError(w, r, http.StatusForbidden, "This request came from another site and was refused.")
	}))
	return cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := d.session(r)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if !ok {
			refuseUnread(w)
			d.renderError(w, r, http.StatusForbidden, "This form expired or came from elsewhere, so nothing was changed. Reload the page and try again.")
			return
		}
		if err := readForm(w, r, s); err != nil {
			status, message := formRefusal(err)
			d.renderError(w, r, status, message)
			return
		}
		d.run(w, r, d.newView(r, s), h)
	}))
}

// session returns the request's valid, unexpired session of the runtime's issuer, unless its user signed out
// after it was signed. A subject is the issuer's name for a user: the same one from another issuer may be someone
// else.
func (d *Dashboard) session(r *http.Request) (session, bool, error) {
	s, ok := d.cookies.session(r)
	if !ok || s.Issuer != d.issuer.URL() {
		return session{}, false, nil
	}
	out, err := d.store.SignedOutAt(r.Context(), s.Subject)
	if err != nil {
		return session{}, false, fmt.Errorf("reading the user's last sign-out: %w", err)
	}
	if !out.IsZero() && s.Issued <= out.UnixMilli() {
		return session{}, false, nil
	}
	return s, true, nil
}

// merchantChange runs h with the merchant of the session, which the user must still own.
func (d *Dashboard) merchantChange(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		if v.merchant == nil {
			return &userError{status: http.StatusForbidden, message: "Choose a merchant you own first."}
		}
		if err := d.limit(w, r, v.merchant); err != nil {
			return err
		}
		return h(w, r, v)
	}
}

// limit applies the owners' request rate of the merchant, the API's owner calls' too.
func (d *Dashboard) limit(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	key, plan := ratelimit.Owner(m.MerchantID)
	ok, _, wait := d.limiter.Allow(r.Context(), key, plan, d.now())
	if ok {
		return nil
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	return &userError{status: http.StatusTooManyRequests, message: "Too many requests from your merchant's owners at once. Wait a second and reload."}
}

// newView resolves the session's merchants against the current bundles, so that an owner removed from a
// Merchant loses access at once.
func (d *Dashboard) newView(r *http.Request, s session) *view {
	v := &view{session: s, lang: requestLanguage(r)}
	v.owned = d.tenants.OwnedBy(s.Subject, s.Email, s.EmailVerified)
	slices.SortFunc(v.owned, func(a, b *tenant.Bundle) int { return strings.Compare(a.MerchantID, b.MerchantID) })
	for _, m := range v.owned {
		if m.MerchantID == s.Merchant {
			v.merchant = m
		}
	}
	return v
}

// run calls h and shows its error.
func (d *Dashboard) run(w http.ResponseWriter, r *http.Request, v *view, h handler) {
	err := h(w, r, v)
	if err == nil {
		return
	}
	var ue *userError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ue):
		d.renderErrorView(w, r, v, ue.status, ue.message)
	case errors.Is(err, store.ErrNotFound):
		d.renderErrorView(w, r, v, http.StatusNotFound, "This item does not exist, or it is not yours.")
	case errors.Is(err, store.ErrInvalidCursor):
		d.renderErrorView(w, r, v, http.StatusBadRequest, "This page link is not valid any more. Start from the first page.")
	case errors.Is(err, store.ErrKnowledgeLimit):
		d.renderErrorView(w, r, v, http.StatusConflict, "Your plan's knowledge item limit is reached: delete items or upgrade the plan.")
	case errors.Is(err, store.ErrKnowledgeSizeLimit):
		d.renderErrorView(w, r, v, http.StatusConflict, "Your plan's knowledge characters limit is reached: shorten or delete items, or upgrade the plan.")
	case errors.Is(err, chat.ErrConversationClosed):
		d.renderErrorView(w, r, v, http.StatusConflict, "This conversation is closed: it takes no more messages.")
	case errors.Is(err, chat.ErrSourceDeclared):
		d.renderErrorView(w, r, v, http.StatusConflict, "Declared in the cluster as a KnowledgeSource: change or delete it there.")
	case errors.Is(err, store.ErrNotReplayable):
		d.renderErrorView(w, r, v, http.StatusConflict, "This delivery is still being attempted; it can be replayed once it has finished.")
	case errors.As(err, &mbe):
		d.renderErrorView(w, r, v, http.StatusRequestEntityTooLarge, "What you sent is too large.")
	default:
		d.fail(w, r, err)
	}
}

// fail logs an unexpected error and shows a page that reveals nothing of it.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	d.log.ErrorContext(r.Context(), "dashboard request failed", "path", r.URL.Path, "error", err)
	d.renderError(w, r, http.StatusInternalServerError, "Something went wrong on our side. Try again; if it persists, tell your platform team.")
}

// pageData is what every page's template gets.
type pageData struct {
	Lang     string
	Merchant *tenant.Bundle
	Owned    []*tenant.Bundle
	Email    string
	CSRF     string
	Path     string
	// LanguageLink is this page's address in another language, but for the language's code (languageLink).
	LanguageLink string
	Notice       string
	// Cursor is set on the pages after the first of a listing.
	Cursor string
	Data   any
}

// render writes the named page with data.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, v *view, status int, name string, data any) {
	p := pageData{Lang: "en", Path: r.URL.Path, LanguageLink: languageLink(r), Data: data, Notice: notices[r.URL.Query().Get("ok")],
		Cursor: r.URL.Query().Get("cursor")}
	if v != nil {
		p.Lang = v.lang
		if !v.signedOut {
			p.Merchant, p.Owned, p.Email, p.CSRF = v.merchant, v.owned, v.session.Email, v.session.CSRF
			if p.Email == "" {
				p.Email = v.session.Subject
			}
		}
	} else {
		p.Lang = requestLanguage(r)
	}
	t, err := d.pages[name].Clone()
	if err == nil {
		t.Funcs(funcs(p.Lang))
		var buf bytes.Buffer
		if err = t.ExecuteTemplate(&buf, "layout", p); err == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			_, _ = w.Write(buf.Bytes())
			return
		}
	}
	d.log.ErrorContext(r.Context(), "rendering a dashboard page", "page", name, "error", err)
	http.Error(w, "Something went wrong on our side.", http.StatusInternalServerError)
}

func (d *Dashboard) renderError(w http.ResponseWriter, r *http.Request, status int, message string) {
	d.renderErrorView(w, r, nil, status, message)
}

func (d *Dashboard) renderErrorView(w http.ResponseWriter, r *http.Request, v *view, status int, message string) {
	d.render(w, r, v, status, "error", struct {
		Status  int
		Message string
	}{status, message})
}

// notices are the confirmations a change's redirect can ask for (?ok=...).
var notices = map[string]string{
	"created":          "The item was added.",
	"updated":          "The item was saved.",
	"deleted":          "The item was deleted.",
	"imported":         "The items were imported.",
	"uploaded":         "The files' items were added.",
	"replayed":         "The delivery was queued to be sent again.",
	"test-sent":        "A test event was queued for the endpoint; its delivery is in the log below.",
	"revoked":          "The key was revoked: it stops working within seconds.",
	"source-added":     "The website was added: its first sync has started.",
	"repository-added": "The repository was added: its first sync has started.",
	"sync-requested":   "The website will be synced now.",
	"source-deleted":   "The website was deleted with its items.",
	// The review queue.
	"review-fixed": "Done: the question left the review list. It comes back only if it is missed again.",
	"answer-saved": "The item was saved and the question left the review list. It comes back only if it is missed again.",
	// The deletions of personal data.
	"conversation-deleted": "The conversation was deleted with its messages, leads and webhook deliveries.",
	"lead-deleted":         "The lead was deleted with its webhook deliveries.",
	// A conversation handed to the team.
	"sent":       "Your message was sent: the visitor sees it at once.",
	"taken-over": "You have taken the conversation over: the assistant is silent.",
	"released":   "The assistant answers the conversation again.",
	"closed":     "The conversation is closed.",
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := templateNames()
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		t, err := template.New(name).Funcs(funcs("en")).ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parsing dashboard page %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

func templateNames() ([]string, error) {
	entries, err := files.ReadDir("templates")
	if err != nil {
		return nil, fmt.Errorf("listing dashboard pages: %w", err)
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".html"); ok && n != "layout" {
			names = append(names, n)
		}
	}
	return names, nil
}

// mailto is the link that writes to address alone. The address is escaped whole as the URI's path, so that no
// '?' of it (a lead stored before addresses were checked strictly) starts the hfields that add recipients or
// headers (RFC 6068).
func mailto(address string) template.URL {
	return template.URL("mailto:" + url.PathEscape(address)) //nolint:gosec // escaped whole: no query, no fragment
}

// funcs are the templates' functions for lang.
func funcs(lang string) template.FuncMap {
	return template.FuncMap{
		"t":  func(s string) string { return translate(lang, s) },
		"tf": func(s string, args ...any) string { return fmt.Sprintf(translate(lang, s), args...) },
		"date": func(t time.Time) string {
			if lang == "de" {
				return t.UTC().Format("02.01.2006 15:04 MST")
			}
			return t.UTC().Format("2006-01-02 15:04 MST")
		},
		// in reports whether path is the section's page or one under it.
		"in": func(path, section string) bool {
			return path == section || (section != prefix && strings.HasPrefix(path, section+"/"))
		},
		"mailto": mailto,
		"join":   strings.Join,
		"sub":    func(a, b int) int { return a - b },
		"list":   func(s ...string) []string { return s },
		"dict": func(kv ...any) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[fmt.Sprint(kv[i])] = kv[i+1]
			}
			return m
		},
	}
}
