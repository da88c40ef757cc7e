// Package devidp is a minimal OpenID Connect issuer for `parley dev` and tests: discovery, a JSON Web Key Set
// and RS256-signed ID tokens, the same wire protocol as a real identity provider. It issues tokens to whoever
// asks its Go API and has no login; never use it in production.
package devidp

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer signs ID tokens and serves what verifiers need to check them.
type Issuer struct {
	url    string
	key    *rsa.PrivateKey
	keyID  string
	signer jose.Signer
}

// New returns an issuer whose identifier is url; Handler must be served at that address.
func New(url string) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating the dev issuer's key: %w", err)
	}
	keyID := fmt.Sprintf("dev-%d", time.Now().Unix())
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: keyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, fmt.Errorf("creating the dev issuer's signer: %w", err)
	}
	return &Issuer{url: url, key: key, keyID: keyID, signer: signer}, nil
}

// URL is the issuer identifier (`iss`).
func (i *Issuer) URL() string { return i.url }

// Token issues an ID token for audience, naming subject and, when given, a verified email.
func (i *Issuer) Token(audience, subject, email string, ttl time.Duration) (string, error) {
	now := time.Now()
	claims := struct {
		jwt.Claims
		Email         string `json:"email,omitempty"`
		EmailVerified bool   `json:"email_verified,omitempty"`
	}{
		Claims: jwt.Claims{
			Issuer: i.url, Subject: subject, Audience: jwt.Audience{audience},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
			Expiry: jwt.NewNumericDate(now.Add(ttl)),
		},
		Email: email, EmailVerified: email != "",
	}
	tok, err := jwt.Signed(i.signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("signing ID token: %w", err)
	}
	return tok, nil
}

// Handler serves the discovery document and the key set, relative to the issuer URL's path.
func (i *Issuer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                                i.url,
			"jwks_uri":                              i.url + "/keys",
			"authorization_endpoint":                i.url + "/authorize",
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &i.key.PublicKey, KeyID: i.keyID, Algorithm: "RS256", Use: "sig"}}})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
