// Package issuer is the runtime's one client of its OpenID Connect issuer, shared by the API (bearer ID tokens)
// and the dashboard (sign-in by authorization code with PKCE, the runtime as a public client). Every exchange
// with the identity provider is bounded: it ends within FetchTimeout and reads at most MaxFetchBytes; after a
// discovery or key-set fetch, successful or not, the next waits MinRefresh. So a runtime starts while its identity
// provider is unreachable, a stalled provider makes sign-ins and bearer calls fail within seconds rather than hang,
// and neither tokens signed with unknown keys (forged, or from a rotation) nor a crowd of sign-ins can make the
// runtime fetch more than once per interval.
package issuer

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
	"golang.org/x/oauth2"
)

// The bounds on every exchange with the identity provider.
const (
	FetchTimeout  = 3 * time.Second
	MinRefresh    = 30 * time.Second
	MaxFetchBytes = 1 << 20
)

// ErrUnavailable is an exchange that failed because the identity provider does not answer (or answers what is not
// a provider's document); a caller tells its user to retry later, not that they were refused.
var ErrUnavailable = errors.New("the identity provider does not answer")

// Identity is who a verified ID token names.
type Identity struct {
	Subject       string
	Email         string
	EmailVerified bool
	// Nonce is the token's nonce claim, which a sign-in compares with the one it sent.
	Nonce string
}

// Client talks to one issuer as one client ID (the audience of the ID tokens it accepts).
type Client struct {
	url      string
	clientID string
	http     *http.Client
	now      func() time.Time
	verifier *oidc.IDTokenVerifier

	// mu guards what follows; it is held during a fetch, so that one fetch runs at a time.
	mu sync.Mutex
	// endpoint is the code flow's, known once the discovery document has been read.
	endpoint oauth2.Endpoint
	jwksURL  string
	keys     []crypto.PublicKey
	// fetched is when the last fetch began, and fetchErr its failure.
	fetched  time.Time
	fetchErr error
}

// New returns a client of the issuer at url for clientID; httpClient makes its requests (http.DefaultClient when
// nil), each bounded by FetchTimeout whatever its own timeout.
func New(url, clientID string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	c := &Client{url: strings.TrimRight(url, "/"), clientID: clientID, http: httpClient, now: time.Now}
	c.verifier = oidc.NewVerifier(url, keySet{c}, &oidc.Config{ClientID: clientID})
	return c
}

// URL is the issuer's identifier, as configured (without a trailing slash).
func (c *Client) URL() string { return c.url }

// Verify checks the token's signature, issuer, audience and expiry, and returns whom it names. While the identity
// provider cannot be reached and no keys are known, the error is ErrUnavailable.
func (c *Client) Verify(ctx context.Context, raw string) (Identity, error) {
	if err := c.ready(ctx, func() bool { return len(c.keys) > 0 }); err != nil {
		return Identity{}, err
	}
	tok, err := c.verifier.Verify(ctx, raw)
	if err != nil {
		return Identity{}, fmt.Errorf("verifying ID token: %w", err)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("reading ID token claims: %w", err)
	}
	return Identity{Subject: tok.Subject, Email: claims.Email, EmailVerified: claims.EmailVerified, Nonce: tok.Nonce}, nil
}

// AuthCodeURL is the address of the issuer's authorization endpoint that starts a sign-in: a code to be sent to
// redirectURL with state, PKCE's S256 challenge of verifier, and nonce in the ID token.
func (c *Client) AuthCodeURL(ctx context.Context, redirectURL, state, verifier, nonce string) (string, error) {
	conf, err := c.config(ctx, redirectURL)
	if err != nil {
		return "", err
	}
	return conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), nil
}

// Exchange redeems a sign-in's code with its PKCE verifier at the token endpoint and returns the ID token, not yet
// verified. A refusal by the issuer is an error of its own; a token endpoint that does not answer within
// FetchTimeout is ErrUnavailable.
func (c *Client) Exchange(ctx context.Context, redirectURL, code, verifier string) (string, error) {
	conf, err := c.config(ctx, redirectURL)
	if err != nil {
		return "", err
	}
	// The oauth2 package reads at most 1 MiB of the answer (MaxFetchBytes); the time is bounded here.
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, c.http), FetchTimeout)
	defer cancel()
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if refused := (*oauth2.RetrieveError)(nil); errors.As(err, &refused) {
		return "", fmt.Errorf("the issuer refused the code: %w", err)
	}
	if err != nil {
		return "", fmt.Errorf("%w: redeeming a code at %s: %w", ErrUnavailable, conf.Endpoint.TokenURL, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", errors.New("the issuer's answer holds no ID token")
	}
	return raw, nil
}

// config is the code flow's configuration for redirectURL, discovering the issuer first when it has not been.
func (c *Client) config(ctx context.Context, redirectURL string) (*oauth2.Config, error) {
	if err := c.ready(ctx, func() bool { return c.endpoint.TokenURL != "" }); err != nil {
		return nil, err
	}
	c.mu.Lock()
	ep := c.endpoint
	c.mu.Unlock()
	return &oauth2.Config{ClientID: c.clientID, Endpoint: ep, RedirectURL: redirectURL, Scopes: []string{oidc.ScopeOpenID, "email"}}, nil
}

// ready makes sure have reports true, fetching when it does not and the last fetch is old enough.
func (c *Client) ready(ctx context.Context, have func() bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if have() {
		return nil
	}
	if err := c.refresh(ctx); err != nil {
		return err
	}
	if !have() {
		return fmt.Errorf("%w: %s has not been read yet", ErrUnavailable, c.url)
	}
	return nil
}

// refresh fetches the discovery document (until it has been read once) and the key set, unless the last fetch
// began less than MinRefresh ago, in which case it answers that fetch's outcome. c.mu is held.
func (c *Client) refresh(ctx context.Context) error {
	now := c.now()
	if !c.fetched.IsZero() && now.Sub(c.fetched) < MinRefresh {
		return c.fetchErr
	}
	c.fetched = now
	// The fetch is the runtime's, not the request's: it ends within the timeout whatever the caller does.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FetchTimeout)
	defer cancel()
	c.fetchErr = c.fetch(ctx)
	return c.fetchErr
}

func (c *Client) fetch(ctx context.Context) error {
	if c.jwksURL == "" {
		var doc struct {
			Issuer        string `json:"issuer"`
			JWKSURL       string `json:"jwks_uri"`
			Authorization string `json:"authorization_endpoint"`
			Token         string `json:"token_endpoint"`
		}
		if err := c.get(ctx, c.url+"/.well-known/openid-configuration", &doc); err != nil {
			return fmt.Errorf("%w: discovering %s: %w", ErrUnavailable, c.url, err)
		}
		if strings.TrimRight(doc.Issuer, "/") != c.url || doc.JWKSURL == "" || doc.Authorization == "" || doc.Token == "" {
			return fmt.Errorf("%w: the discovery document of %s names issuer %q, key set %q, authorization endpoint %q and token endpoint %q",
				ErrUnavailable, c.url, doc.Issuer, doc.JWKSURL, doc.Authorization, doc.Token)
		}
		// A public client: the client ID in the form, no secret.
		c.jwksURL, c.endpoint = doc.JWKSURL, oauth2.Endpoint{AuthURL: doc.Authorization, TokenURL: doc.Token, AuthStyle: oauth2.AuthStyleInParams}
	}
	var set jose.JSONWebKeySet
	if err := c.get(ctx, c.jwksURL, &set); err != nil {
		return fmt.Errorf("%w: fetching the key set of %s: %w", ErrUnavailable, c.url, err)
	}
	var keys []crypto.PublicKey
	for _, k := range set.Keys {
		if k.Use == "" || k.Use == "sig" {
			keys = append(keys, k.Key)
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: the key set of %s holds no signing key", ErrUnavailable, c.url)
	}
	c.keys = keys
	return nil
}

// get fetches url's JSON document into out, at most MaxFetchBytes of it.
func (c *Client) get(ctx context.Context, url string, out any) error {
	// url is the configured issuer's discovery document, or the key set that document names.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxFetchBytes+1))
	if err != nil {
		return err
	}
	if len(body) > MaxFetchBytes {
		return fmt.Errorf("the document is larger than %d bytes", MaxFetchBytes)
	}
	return json.Unmarshal(body, out)
}

// keySet checks signatures against the client's keys, refreshing them once per MinRefresh when a token is signed
// by none of them.
type keySet struct{ c *Client }

// VerifySignature implements oidc.KeySet.
func (k keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	c := k.c
	c.mu.Lock()
	defer c.mu.Unlock()
	payload, err := (&oidc.StaticKeySet{PublicKeys: c.keys}).VerifySignature(ctx, raw)
	if err == nil {
		return payload, nil
	}
	if rerr := c.refresh(ctx); rerr != nil {
		return nil, err
	}
	return (&oidc.StaticKeySet{PublicKeys: c.keys}).VerifySignature(ctx, raw)
}
