package server

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// How the verifier treats its identity provider: every fetch (discovery or key set) ends within oidcFetchTimeout
// and reads at most oidcMaxFetchBytes; after a fetch, successful or not, the next waits oidcMinRefresh, so that
// neither a stalled provider nor tokens signed with unknown keys (forged, or from a rotation) can make the runtime
// fetch more than once per interval.
const (
	oidcFetchTimeout  = 3 * time.Second
	oidcMinRefresh    = 30 * time.Second
	oidcMaxFetchBytes = 1 << 20
)

// errIssuerUnavailable is a token that cannot be checked because the identity provider does not answer; the
// caller gets 503 unavailable, not 401.
var errIssuerUnavailable = errors.New("the identity provider does not answer")

// OIDCVerifier verifies ID tokens of one issuer for one audience (client ID). The issuer's discovery document
// and key set are fetched on first use, bounded in time and size, and again after a failure or when a token names
// a key the set lacks, at most once per oidcMinRefresh; so a runtime starts even while its identity provider is
// unreachable, and a stalled one makes the dashboard endpoints answer 503 within seconds instead of hanging.
type OIDCVerifier struct {
	issuer   string
	audience string
	client   *http.Client
	now      func() time.Time

	// mu guards what follows; it is held during a fetch, so that one fetch runs at a time.
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	jwksURL  string
	keys     []crypto.PublicKey
	// fetched is when the last fetch began, and fetchErr its failure.
	fetched  time.Time
	fetchErr error
}

// NewOIDCVerifier returns a verifier; client is used for discovery and key fetches (http.DefaultClient when nil),
// each bounded by oidcFetchTimeout.
func NewOIDCVerifier(issuer, audience string, client *http.Client) *OIDCVerifier {
	if client == nil {
		client = http.DefaultClient
	}
	v := &OIDCVerifier{issuer: strings.TrimRight(issuer, "/"), audience: audience, client: client, now: time.Now}
	v.verifier = oidc.NewVerifier(issuer, keySet{v}, &oidc.Config{ClientID: audience})
	return v
}

// Verify checks the token's signature, issuer, audience and expiry, and returns its principal. While the identity
// provider cannot be reached and no keys are known, the error is errIssuerUnavailable.
func (v *OIDCVerifier) Verify(ctx context.Context, raw string) (Principal, error) {
	if err := v.ready(ctx); err != nil {
		return Principal{}, err
	}
	tok, err := v.verifier.Verify(ctx, raw)
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

// ready makes sure keys are known, fetching them when none are and the last fetch is old enough.
func (v *OIDCVerifier) ready(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.keys) > 0 {
		return nil
	}
	return v.refresh(ctx)
}

// refresh fetches the discovery document (until it has been read once) and the key set, unless the last fetch
// began less than oidcMinRefresh ago, in which case it answers that fetch's outcome. v.mu is held.
func (v *OIDCVerifier) refresh(ctx context.Context) error {
	now := v.now()
	if !v.fetched.IsZero() && now.Sub(v.fetched) < oidcMinRefresh {
		return v.fetchErr
	}
	v.fetched = now
	// The fetch is the runtime's, not the request's: it ends within the timeout whatever the caller does.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), oidcFetchTimeout)
	defer cancel()
	v.fetchErr = v.fetch(ctx)
	return v.fetchErr
}

func (v *OIDCVerifier) fetch(ctx context.Context) error {
	if v.jwksURL == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURL string `json:"jwks_uri"`
		}
		if err := v.get(ctx, v.issuer+"/.well-known/openid-configuration", &doc); err != nil {
			return fmt.Errorf("%w: discovering %s: %w", errIssuerUnavailable, v.issuer, err)
		}
		if strings.TrimRight(doc.Issuer, "/") != v.issuer || doc.JWKSURL == "" {
			return fmt.Errorf("%w: the discovery document of %s names issuer %q and key set %q", errIssuerUnavailable, v.issuer, doc.Issuer, doc.JWKSURL)
		}
		v.jwksURL = doc.JWKSURL
	}
	var set jose.JSONWebKeySet
	if err := v.get(ctx, v.jwksURL, &set); err != nil {
		return fmt.Errorf("%w: fetching the key set of %s: %w", errIssuerUnavailable, v.issuer, err)
	}
	var keys []crypto.PublicKey
	for _, k := range set.Keys {
		if k.Use == "" || k.Use == "sig" {
			keys = append(keys, k.Key)
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: the key set of %s holds no signing key", errIssuerUnavailable, v.issuer)
	}
	v.keys = keys
	return nil
}

// get fetches url's JSON document into out, at most oidcMaxFetchBytes of it.
func (v *OIDCVerifier) get(ctx context.Context, url string, out any) error {
	// url is the configured issuer's discovery document, or the key set that document names.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, oidcMaxFetchBytes+1))
	if err != nil {
		return err
	}
	if len(body) > oidcMaxFetchBytes {
		return fmt.Errorf("the document is larger than %d bytes", oidcMaxFetchBytes)
	}
	return json.Unmarshal(body, out)
}

// keySet checks signatures against the verifier's keys, refreshing them once per oidcMinRefresh when a token is
// signed by none of them.
type keySet struct{ v *OIDCVerifier }

// VerifySignature implements oidc.KeySet.
func (k keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	v := k.v
	v.mu.Lock()
	defer v.mu.Unlock()
	payload, err := (&oidc.StaticKeySet{PublicKeys: v.keys}).VerifySignature(ctx, raw)
	if err == nil {
		return payload, nil
	}
	if rerr := v.refresh(ctx); rerr != nil {
		return nil, err
	}
	return (&oidc.StaticKeySet{PublicKeys: v.keys}).VerifySignature(ctx, raw)
}
