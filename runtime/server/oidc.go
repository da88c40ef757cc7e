package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
)

// OIDCVerifier verifies ID tokens of one issuer for one audience (client ID). The issuer's discovery document
// is fetched on first use and again after a failure, so a runtime starts even while its identity provider is
// unreachable.
type OIDCVerifier struct {
	issuer   string
	audience string
	client   *http.Client

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

// NewOIDCVerifier returns a verifier; client is used for discovery and key fetches (http.DefaultClient when nil).
func NewOIDCVerifier(issuer, audience string, client *http.Client) *OIDCVerifier {
	if client == nil {
		client = http.DefaultClient
	}
	return &OIDCVerifier{issuer: issuer, audience: audience, client: client}
}

// Verify checks the token's signature, issuer, audience and expiry, and returns its principal.
func (v *OIDCVerifier) Verify(ctx context.Context, raw string) (Principal, error) {
	ver, err := v.get(ctx)
	if err != nil {
		return Principal{}, err
	}
	tok, err := ver.Verify(oidc.ClientContext(ctx, v.client), raw)
	if err != nil {
		return Principal{}, fmt.Errorf("verifying ID token: %w", err)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}
	if err := tok.Claims(&claims); err != nil {
		return Principal{}, fmt.Errorf("reading ID token claims: %w", err)
	}
	return Principal{Subject: tok.Subject, Email: claims.Email, EmailVerified: claims.EmailVerified}, nil
}

func (v *OIDCVerifier) get(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	// The provider keeps using this context to fetch rotated keys, so it must outlive the request.
	provider, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), v.client), v.issuer)
	if err != nil {
		return nil, fmt.Errorf("discovering OIDC issuer %s: %w", v.issuer, err)
	}
	v.verifier = provider.Verifier(&oidc.Config{ClientID: v.audience})
	return v.verifier, nil
}
