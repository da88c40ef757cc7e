package dashboard

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/parley-dev/parley/runtime/issuer"
	"github.com/parley-dev/parley/runtime/ratelimit"
)

// login sends the browser to the issuer, with PKCE (S256), a state and a nonce kept in a short-lived cookie.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	st := loginState{State: newToken(), Verifier: oauth2.GenerateVerifier(), Nonce: newToken(), Next: localPath(r.URL.Query().Get("next")),
		Expires: d.now().Add(loginTTL).Unix()}
	to, err := d.issuer.AuthCodeURL(r.Context(), d.redirectURL(), st.State, st.Verifier, st.Nonce)
	if err != nil {
		d.issuerUnavailable(w, r, err)
		return
	}
	v, err := d.cookies.seal(loginCookie, st)
	if err != nil {
		d.fail(w, r, fmt.Errorf("sealing the sign-in state: %w", err))
		return
	}
	d.cookies.set(w, loginCookie, v, loginTTL)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// The sign-in limit: each anonymous sign-in stores its single-use state (chat.Service.RedeemSignIn), so the
// start and the callback, two requests of one sign-in, are counted per client address. 30 in 10 minutes is 15
// sign-ins, more than an office behind one address makes, and bounds the rows one address can make to 180 an hour.
const (
	SignInsPerAddress = 30
	signInWindow      = 10 * time.Minute
)

// limitSignIns runs h for a request within its client address's sign-in limit, and refuses it with 429,
// Retry-After and a page saying so past it.
func (d *Dashboard) limitSignIns(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A leading NUL keeps these keys apart from the API's, which begin with a merchant ID.
		key := "\x00signin\x00" + ratelimit.AddressKey(d.clients.Address(r))
		refused, wait := d.signIns.Allow(r.Context(), []ratelimit.Quota{{Key: key, N: SignInsPerAddress, Period: signInWindow}}, d.now())
		if refused >= 0 {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
			d.renderError(w, r, http.StatusTooManyRequests, "Too many sign-ins from your address. Wait a few minutes and try again.")
			return
		}
		h(w, r)
	})
}

// redirectURL is where the issuer sends the browser back with a code.
func (d *Dashboard) redirectURL() string { return d.publicURL + prefix + "callback" }

// issuerUnavailable says that signing in cannot be done now, the identity provider not answering (err).
func (d *Dashboard) issuerUnavailable(w http.ResponseWriter, r *http.Request, err error) {
	d.log.ErrorContext(r.Context(), "dashboard sign-in unavailable", "error", err)
	d.renderError(w, r, http.StatusServiceUnavailable, "Sign-in is unavailable: the identity provider does not answer. Try again in a minute.")
}

// callback redeems the issuer's code with the PKCE verifier, verifies the ID token (signature, issuer, audience,
// expiry, nonce) and starts a session.
func (d *Dashboard) callback(w http.ResponseWriter, r *http.Request) {
	var st loginState
	ck, ok := d.cookies.get(r, loginCookie)
	if !ok || d.cookies.open(loginCookie, ck, &st) != nil || d.now().Unix() >= st.Expires {
		d.renderError(w, r, http.StatusBadRequest, "This sign-in expired or was started elsewhere. Sign in again.")
		return
	}
	d.cookies.clear(w, loginCookie)
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		d.renderError(w, r, http.StatusBadRequest, "This sign-in expired or was started elsewhere. Sign in again.")
		return
	}
	// The state is taken once, whatever comes of it: a copy of this address and cookie signs nobody in again.
	fresh, err := d.chat.RedeemSignIn(r.Context(), st.State, time.Unix(st.Expires, 0))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if !fresh {
		d.log.InfoContext(r.Context(), "dashboard sign-in refused", "reason", "its callback was taken already")
		d.renderError(w, r, http.StatusBadRequest, "This sign-in expired or was started elsewhere. Sign in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		d.renderError(w, r, http.StatusForbidden, "The identity provider refused the sign-in. Sign in again.")
		return
	}
	raw, err := d.issuer.Exchange(r.Context(), d.redirectURL(), q.Get("code"), st.Verifier)
	if errors.Is(err, issuer.ErrUnavailable) {
		d.issuerUnavailable(w, r, err)
		return
	}
	if err != nil {
		d.log.InfoContext(r.Context(), "dashboard sign-in refused", "reason", "code exchange failed", "error", err)
		d.renderError(w, r, http.StatusForbidden, "The sign-in could not be completed. Sign in again.")
		return
	}
	id, err := d.issuer.Verify(r.Context(), raw)
	if errors.Is(err, issuer.ErrUnavailable) {
		d.issuerUnavailable(w, r, err)
		return
	}
	if err != nil || subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(st.Nonce)) != 1 {
		d.log.InfoContext(r.Context(), "dashboard sign-in refused", "reason", "ID token not valid", "error", err)
		d.renderError(w, r, http.StatusForbidden, "The sign-in could not be completed. Sign in again.")
		return
	}
	now := d.now()
	s := session{Issuer: d.issuer.URL(), Subject: id.Subject, Email: id.Email, EmailVerified: id.EmailVerified, CSRF: newToken(),
		Issued: now.UnixMilli(), Expires: now.Add(sessionTTL).Unix()}
	if err := d.cookies.saveSession(w, s); err != nil {
		d.fail(w, r, fmt.Errorf("sealing the session: %w", err))
		return
	}
	next := st.Next
	if next == "" {
		next = prefix
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session.
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, v *view) error {
	// Recorded, not only cleared: a copy of the cookie kept elsewhere must not go on working.
	if err := d.chat.SignOut(r.Context(), v.session.Subject); err != nil {
		return err
	}
	d.cookies.clear(w, sessionCookie)
	v.signedOut = true
	d.render(w, r, v, http.StatusOK, "signedout", nil)
	return nil
}

// maxNext is the longest page address a sign-in returns to: the address travels in the sign-in's cookie, which
// a browser drops past about 4 KB.
const maxNext = 1024

// localPath returns p, its path cleaned, when it is a page of the dashboard of at most maxNext bytes, and ""
// otherwise, so that a sign-in never redirects elsewhere ("/dashboard/../x" is "/x", elsewhere) nor fails.
func localPath(p string) string {
	if len(p) > maxNext || !strings.HasPrefix(p, prefix) || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") {
		return ""
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return ""
	}
	cleaned := path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && cleaned != "/" {
		cleaned += "/"
	}
	if !strings.HasPrefix(cleaned, prefix) {
		return ""
	}
	u.Path, u.RawPath = cleaned, ""
	return u.String()
}
