// Package devidp is a minimal OpenID Connect issuer for `parley dev` and tests: discovery, a JSON Web Key Set,
// RS256-signed ID tokens, and the authorization code flow with PKCE (S256) behind a one-field dev login, the same
// wire protocol as a real identity provider. Anyone who reaches it can sign in as anyone; never use it in
// production.
package devidp

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer signs ID tokens and serves what verifiers and clients of the code flow need.
type Issuer struct {
	url    string
	key    *rsa.PrivateKey
	keyID  string
	signer jose.Signer

	// SuggestedEmail fills the sign-in page's email field when the client sends no login_hint.
	SuggestedEmail string

	mu    sync.Mutex
	codes map[string]grant // authorization codes not yet redeemed
}

// New returns an issuer with a new key whose identifier is url; Handler must be served at that address.
func New(url string) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating the dev issuer's key: %w", err)
	}
	return newIssuer(url, key)
}

// Open is New with the signing key kept in keyFile (PEM, PKCS #8): loaded when it exists, generated and written
// otherwise, so that the tokens and sessions it signed stay valid across restarts.
func Open(url, keyFile string) (*Issuer, error) {
	data, err := os.ReadFile(keyFile)
	if errors.Is(err, os.ErrNotExist) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("generating the dev issuer's key: %w", err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("encoding the dev issuer's key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
			return nil, fmt.Errorf("keeping the dev issuer's key: %w", err)
		}
		if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, fmt.Errorf("keeping the dev issuer's key: %w", err)
		}
		return newIssuer(url, key)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the dev issuer's key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("reading the dev issuer's key: %s is not PEM (delete it to start afresh)", keyFile)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	key, ok := parsed.(*rsa.PrivateKey)
	if err != nil || !ok {
		return nil, fmt.Errorf("reading the dev issuer's key: %s holds no RSA key (delete it to start afresh)", keyFile)
	}
	return newIssuer(url, key)
}

func newIssuer(url string, key *rsa.PrivateKey) (*Issuer, error) {
	thumb, err := (&jose.JSONWebKey{Key: &key.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("the dev issuer's key ID: %w", err)
	}
	keyID := "dev-" + base64.RawURLEncoding.EncodeToString(thumb[:9])
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: keyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, fmt.Errorf("creating the dev issuer's signer: %w", err)
	}
	return &Issuer{url: url, key: key, keyID: keyID, signer: signer, codes: map[string]grant{}}, nil
}

// URL is the issuer identifier (`iss`).
func (i *Issuer) URL() string { return i.url }

// Token issues an ID token for audience, naming subject and, when given, a verified email.
func (i *Issuer) Token(audience, subject, email string, ttl time.Duration) (string, error) {
	return i.token(audience, subject, email, "", ttl)
}

func (i *Issuer) token(audience, subject, email, nonce string, ttl time.Duration) (string, error) {
	now := time.Now()
	claims := struct {
		jwt.Claims
		Email         string `json:"email,omitempty"`
		EmailVerified bool   `json:"email_verified,omitempty"`
		Nonce         string `json:"nonce,omitempty"`
	}{
		Claims: jwt.Claims{
			Issuer: i.url, Subject: subject, Audience: jwt.Audience{audience},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
			Expiry: jwt.NewNumericDate(now.Add(ttl)),
		},
		Email: email, EmailVerified: email != "", Nonce: nonce,
	}
	tok, err := jwt.Signed(i.signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("signing ID token: %w", err)
	}
	return tok, nil
}

// Handler serves the discovery document, the key set and the code flow's endpoints, relative to the issuer
// URL's path.
func (i *Issuer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                i.url,
			"jwks_uri":                              i.url + "/keys",
			"authorization_endpoint":                i.url + "/authorize",
			"token_endpoint":                        i.url + "/token",
			"response_types_supported":              []string{"code", "id_token"},
			"grant_types_supported":                 []string{"authorization_code"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported":                      []string{"openid", "email"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &i.key.PublicKey, KeyID: i.keyID, Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /authorize", i.loginPage)
	mux.HandleFunc("POST /authorize", i.authorize)
	mux.HandleFunc("POST /token", i.exchange)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
