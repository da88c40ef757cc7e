package dashboard

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// signIn is the runtime as a public OIDC client of its issuer. The issuer is discovered on first use and again
// after a failure, so that the runtime starts while its identity provider is unreachable.
type signIn struct {
	issuer, clientID, redirectURL string
	client                        *http.Client

	mu       sync.Mutex
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func newSignIn(issuer, clientID, redirectURL string, client *http.Client) *signIn {
	if client == nil {
		client = http.DefaultClient
	}
	return &signIn{issuer: issuer, clientID: clientID, redirectURL: redirectURL, client: client}
}

func (s *signIn) get(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oauth != nil {
		return s.oauth, s.verifier, nil
	}
	// The provider keeps using this context to fetch rotated keys, so it must outlive the request.
	provider, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), s.client), s.issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("discovering OIDC issuer %s: %w", s.issuer, err)
	}
	ep := provider.Endpoint()
	ep.AuthStyle = oauth2.AuthStyleInParams // a public client: the client ID in the form, no secret
	s.oauth = &oauth2.Config{ClientID: s.clientID, Endpoint: ep, RedirectURL: s.redirectURL, Scopes: []string{oidc.ScopeOpenID, "email"}}
	s.verifier = provider.Verifier(&oidc.Config{ClientID: s.clientID})
	return s.oauth, s.verifier, nil
}

// login sends the browser to the issuer, with PKCE (S256), a state and a nonce kept in a short-lived cookie.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	conf, _, err := d.oidc.get(r.Context())
	if err != nil {
		d.log.Error("dashboard sign-in unavailable", "error", err)
		d.renderError(w, r, http.StatusServiceUnavailable, "Sign-in is unavailable: the identity provider does not answer. Try again in a minute.")
		return
	}
	st := loginState{State: newToken(), Verifier: oauth2.GenerateVerifier(), Nonce: newToken(), Next: localPath(r.URL.Query().Get("next")),
		Expires: d.now().Add(loginTTL).Unix()}
	v, err := d.cookies.seal(loginCookie, st)
	if err != nil {
		d.fail(w, r, fmt.Errorf("sealing the sign-in state: %w", err))
		return
	}
	d.cookies.set(w, loginCookie, v, loginTTL)
	http.Redirect(w, r, conf.AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier), oidc.Nonce(st.Nonce)), http.StatusSeeOther)
}

// callback redeems the issuer's code with the PKCE verifier, verifies the ID token (signature, issuer, audience,
// expiry, nonce) and starts a session.
func (d *Dashboard) callback(w http.ResponseWriter, r *http.Request) {
	var st loginState
	ck, err := r.Cookie(loginCookie)
	if err != nil || d.cookies.open(loginCookie, ck.Value, &st) != nil || d.now().Unix() >= st.Expires {
		d.renderError(w, r, http.StatusBadRequest, "This sign-in expired or was started elsewhere. Sign in again.")
		return
	}
	d.cookies.clear(w, loginCookie)
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		d.renderError(w, r, http.StatusBadRequest, "This sign-in expired or was started elsewhere. Sign in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		d.renderError(w, r, http.StatusForbidden, "The identity provider refused the sign-in. Sign in again.")
		return
	}
	conf, verifier, err := d.oidc.get(r.Context())
	if err != nil {
		d.log.Error("dashboard sign-in unavailable", "error", err)
		d.renderError(w, r, http.StatusServiceUnavailable, "Sign-in is unavailable: the identity provider does not answer. Try again in a minute.")
		return
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(r.Context(), d.oidc.client), 15*time.Second)
	defer cancel()
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		d.log.Info("dashboard sign-in refused", "reason", "code exchange failed", "error", err)
		d.renderError(w, r, http.StatusForbidden, "The sign-in could not be completed. Sign in again.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idTok, err := verifier.Verify(ctx, raw)
	if err != nil || subtle.ConstantTimeCompare([]byte(idTok.Nonce), []byte(st.Nonce)) != 1 {
		d.log.Info("dashboard sign-in refused", "reason", "ID token not valid", "error", err)
		d.renderError(w, r, http.StatusForbidden, "The sign-in could not be completed. Sign in again.")
		return
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}
	if err := idTok.Claims(&claims); err != nil {
		d.renderError(w, r, http.StatusForbidden, "The sign-in could not be completed. Sign in again.")
		return
	}
	now := d.now()
	s := session{Subject: idTok.Subject, Email: claims.Email, EmailVerified: claims.EmailVerified, CSRF: newToken(),
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
