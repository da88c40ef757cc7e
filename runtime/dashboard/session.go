package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

const (
	sessionCookie = "parley_session"
	loginCookie   = "parley_login"
	// sessionTTL is how long a sign-in lasts.
	sessionTTL = 8 * time.Hour
	// loginTTL is how long a sign-in may take at the identity provider.
	loginTTL = 10 * time.Minute
)

// session is who is signed in, the merchant they chose, and the token their forms must carry.
type session struct {
	// Issuer is the identity provider the user signed in with: a session outlives no change of the runtime's.
	Issuer        string `json:"iss"`
	Subject       string `json:"sub"`
	Email         string `json:"email,omitempty"`
	EmailVerified bool   `json:"ev,omitempty"`
	Merchant      string `json:"m,omitempty"`
	CSRF          string `json:"csrf"`
	// Issued is when the session was signed, in unix milliseconds: a sign-out since ends it (Dashboard.session).
	Issued  int64 `json:"iat,omitempty"`
	Expires int64 `json:"exp"`
}

// loginState is what the callback of a sign-in needs: the state and nonce sent, and the PKCE verifier.
type loginState struct {
	State    string `json:"state"`
	Verifier string `json:"verifier"`
	Nonce    string `json:"nonce"`
	Next     string `json:"next,omitempty"`
	Expires  int64  `json:"exp"`
}

// cookies signs and reads the dashboard's cookies. Their content is not secret from their holder (nothing in
// them is), but it cannot be changed or made up without the key.
type cookies struct {
	key    []byte
	secure bool
	now    func() time.Time
}

// seal encodes v and signs it for purpose, which keeps one cookie from being replayed as another.
func (c cookies) seal(purpose string, v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(data)
	return payload + "." + base64.RawURLEncoding.EncodeToString(c.mac(purpose, payload)), nil
}

func (c cookies) mac(purpose, payload string) []byte {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte(purpose + "\x00" + payload))
	return h.Sum(nil)
}

// open checks value's signature for purpose and decodes it into v.
func (c cookies) open(purpose, value string, v any) error {
	payload, sig, ok := strings.Cut(value, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(mac, c.mac(purpose, payload)) {
		return errors.New("the cookie's signature does not match")
	}
	data, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return errors.New("the cookie is malformed")
	}
	return json.Unmarshal(data, v)
}

// name is the name of the cookie called base as browsers hold it. Under TLS it has the __Host- prefix: a browser
// keeps such a cookie only when it was set Secure, by a secure origin, with Path=/ and no Domain, so that neither
// another host of the domain nor a plain-http page can plant or overwrite it (a session fixation). Plain http
// (development) cannot have the prefix: there the cookie keeps its name and is scoped to the dashboard's path.
func (c cookies) name(base string) string {
	if c.secure {
		return "__Host-" + base
	}
	return base
}

// path is the cookies' Path: "/", as the __Host- prefix requires, under TLS; the dashboard's otherwise.
func (c cookies) path() string {
	if c.secure {
		return "/"
	}
	return prefix
}

// set writes the cookie called base (see name): HttpOnly, SameSite=Lax (so that the identity provider's redirect
// back and links from elsewhere carry it; changes are guarded by the CSRF checks), Secure under TLS.
func (c cookies) set(w http.ResponseWriter, base, value string, ttl time.Duration) {
	//nolint:gosec // Secure follows the public URL's scheme: plain http in development only
	http.SetCookie(w, &http.Cookie{Name: c.name(base), Value: value, Path: c.path(), MaxAge: int(ttl / time.Second), HttpOnly: true,
		Secure: c.secure, SameSite: http.SameSiteLaxMode})
}

func (c cookies) clear(w http.ResponseWriter, base string) {
	//nolint:gosec // as in set
	http.SetCookie(w, &http.Cookie{Name: c.name(base), Value: "", Path: c.path(), MaxAge: -1, HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteLaxMode})
}

// get returns the value of the request's cookie called base (see name).
func (c cookies) get(r *http.Request, base string) (string, bool) {
	ck, err := r.Cookie(c.name(base))
	if err != nil {
		return "", false
	}
	return ck.Value, true
}

// session returns the request's valid, unexpired session.
func (c cookies) session(r *http.Request) (session, bool) {
	var s session
	v, ok := c.get(r, sessionCookie)
	if !ok || c.open(sessionCookie, v, &s) != nil || s.Subject == "" || c.now().Unix() >= s.Expires {
		return session{}, false
	}
	return s, true
}

func (c cookies) saveSession(w http.ResponseWriter, s session) error {
	v, err := c.seal(sessionCookie, s)
	if err != nil {
		return err
	}
	c.set(w, sessionCookie, v, time.Unix(s.Expires, 0).Sub(c.now()))
	return nil
}

// validCSRF reports whether the form's token is the session's, compared in constant time.
func validCSRF(s session, r *http.Request) bool {
	return sameToken(s, r.PostFormValue("csrf"))
}

// sameToken reports whether got is the session's CSRF token, compared in constant time.
func sameToken(s session, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}

// newToken returns a random token for state, nonces and CSRF.
func newToken() string { return rand.Text() }
