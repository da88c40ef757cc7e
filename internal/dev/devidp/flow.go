package devidp

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// codeTTL is how long an authorization code can be redeemed.
const codeTTL = time.Minute

// grant is what an authorization code stands for.
type grant struct {
	clientID, redirectURI, challenge, email, nonce string
	expires                                        time.Time
}

// authRequest is an authorization request's parameters, checked.
type authRequest struct {
	ClientID, RedirectURI, State, Challenge, Nonce, Scope, LoginHint string
}

// parseAuthRequest reads the code flow's parameters from r's form; PKCE with S256 is required.
func parseAuthRequest(r *http.Request) (authRequest, string) {
	q := authRequest{ClientID: r.FormValue("client_id"), RedirectURI: r.FormValue("redirect_uri"), State: r.FormValue("state"),
		Challenge: r.FormValue("code_challenge"), Nonce: r.FormValue("nonce"), Scope: r.FormValue("scope"), LoginHint: r.FormValue("login_hint")}
	u, err := url.Parse(q.RedirectURI)
	switch {
	case r.FormValue("response_type") != "code":
		return q, "response_type must be code"
	case q.ClientID == "":
		return q, "client_id is missing"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "":
		return q, "redirect_uri must be an absolute http or https URL"
	case q.Challenge == "" || r.FormValue("code_challenge_method") != "S256":
		return q, "PKCE is required: send code_challenge with code_challenge_method=S256"
	}
	return q, ""
}

// loginStyle is the sign-in page's own style, allowed by its hash (loginCSP): the page loads nothing.
const loginStyle = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1f2328;background:#f6f7f9}` +
	`main{max-width:24rem;margin:12vh auto;padding:2rem;background:#fff;border:1px solid #d8dce1;border-radius:12px}` +
	`h1{font-size:1.25rem;margin:0 0 .5rem}p{color:#59636e;font-size:.9rem;margin:0 0 1.25rem}` +
	`label{display:block;font-weight:600;margin-bottom:.25rem}` +
	`input[type=email]{box-sizing:border-box;width:100%;padding:.55rem .7rem;font:inherit;border:1px solid #b8bfc7;border-radius:8px}` +
	`button{margin-top:1rem;width:100%;padding:.6rem;font:inherit;font-weight:600;color:#fff;background:#1f6feb;border:0;border-radius:8px;cursor:pointer}`

// loginCSP lets the sign-in page apply loginStyle and nothing else.
var loginCSP = func() string {
	sum := sha256.Sum256([]byte(loginStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'"
}()

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Dev sign-in</title>
<style>` + loginStyle + `</style></head>
<body>
<main>
<h1>Parley dev sign-in</h1>
<p>This is the local development issuer: it signs you in as whatever email you type, without a password.</p>
<form method="post">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<label for="email">Email</label>
<input id="email" name="email" type="email" required autofocus value="{{.Email}}">
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`))

// loginPage asks for the email to sign in as, filled with the client's login_hint or else the issuer's
// SuggestedEmail.
func (i *Issuer) loginPage(w http.ResponseWriter, r *http.Request) {
	q, problem := parseAuthRequest(r)
	if problem != "" {
		http.Error(w, "invalid authorization request: "+problem, http.StatusBadRequest)
		return
	}
	hidden := map[string]string{"response_type": "code", "client_id": q.ClientID, "redirect_uri": q.RedirectURI, "state": q.State,
		"code_challenge": q.Challenge, "code_challenge_method": "S256", "nonce": q.Nonce, "scope": q.Scope}
	email := q.LoginHint
	if email == "" {
		email = i.SuggestedEmail
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", loginCSP)
	_ = loginTemplate.Execute(w, map[string]any{"Hidden": hidden, "Email": email})
}

// authorize signs the user in as the email given and sends the browser back with a code.
func (i *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q, problem := parseAuthRequest(r)
	email := strings.TrimSpace(r.FormValue("email"))
	if problem == "" && (email == "" || !strings.Contains(email, "@")) {
		problem = "email is missing"
	}
	if problem != "" {
		http.Error(w, "invalid authorization request: "+problem, http.StatusBadRequest)
		return
	}
	code := rand.Text()
	i.mu.Lock()
	now := time.Now()
	for c, g := range i.codes {
		if now.After(g.expires) {
			delete(i.codes, c)
		}
	}
	i.codes[code] = grant{clientID: q.ClientID, redirectURI: q.RedirectURI, challenge: q.Challenge, email: email, nonce: q.Nonce,
		expires: now.Add(codeTTL)}
	i.mu.Unlock()
	u, _ := url.Parse(q.RedirectURI) // checked by parseAuthRequest
	v := u.Query()
	v.Set("code", code)
	if q.State != "" {
		v.Set("state", q.State)
	}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// exchange redeems an authorization code, once, for an ID token, checking the client, the redirect URI and the
// PKCE verifier.
func (i *Issuer) exchange(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("grant_type") != "authorization_code" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	code := r.FormValue("code")
	i.mu.Lock()
	g, ok := i.codes[code]
	delete(i.codes, code)
	i.mu.Unlock()
	sum := sha256.Sum256([]byte(r.FormValue("code_verifier")))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	if !ok || time.Now().After(g.expires) || g.clientID != r.FormValue("client_id") || g.redirectURI != r.FormValue("redirect_uri") ||
		subtle.ConstantTimeCompare([]byte(challenge), []byte(g.challenge)) != 1 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant",
			"error_description": "the code is unknown, used, expired, or for another client, redirect URI or verifier"})
		return
	}
	const ttl = time.Hour
	tok, err := i.token(g.clientID, g.email, g.email, g.nonce, ttl)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "id_token": tok,
		"expires_in": int(ttl / time.Second)})
}
