package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/parley-dev/parley/runtime/issuer"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TokenVerifier checks an ID token and returns who it names: the runtime's issuer.Client, which the dashboard's
// sign-in shares.
type TokenVerifier interface {
	Verify(ctx context.Context, rawToken string) (issuer.Identity, error)
}

// keyCaller is a chat caller authenticated by API key.
type keyCaller struct {
	merchant *tenant.Bundle
	key      tenant.APIKey
	// origin is the browser origin the key was used from, when allowed; CORS answers name it.
	origin string
}

// authenticateKey finds the merchant of the X-API-Key header and applies the key's rules: publishable keys
// only from the merchant's allowed origins, secret keys never from a browser and only on plans with API access,
// no chat for suspended merchants. The key itself never reaches a log or an error.
func (s *Server) authenticateKey(r *http.Request) (keyCaller, error) {
	raw := r.Header.Get(headerAPIKey)
	if raw == "" {
		return keyCaller{}, unauthorized(keyChallenge, "send your API key in the X-API-Key header")
	}
	sum := sha256.Sum256([]byte(raw))
	hash := hex.EncodeToString(sum[:])
	merchant, key, ok, err := s.chat.ResolveKey(r.Context(), s.tenants, hash)
	if err != nil {
		return keyCaller{}, err
	}
	// The lookup is by hash, so its timing says nothing about the key; the comparison is constant-time anyway.
	if !ok || subtle.ConstantTimeCompare([]byte(hash), []byte(key.SHA256)) != 1 {
		return keyCaller{}, unauthorized(keyChallenge, "the API key is not valid: it is unknown, revoked or expired")
	}
	origin := s.requestOrigin(r)
	switch key.Type {
	case tenant.KeyPublishable:
		if origin == "" || !slices.Contains(merchant.AllowedOrigins, strings.ToLower(origin)) {
			return keyCaller{}, newError(http.StatusForbidden, codeOriginNotAllowed,
				"this publishable key is not allowed from origin %q; add it to the merchant's allowedOrigins", origin)
		}
	case tenant.KeySecret:
		if origin != "" {
			return keyCaller{}, newError(http.StatusForbidden, codeSecretKeyInBrowser,
				"a secret key was sent from a browser; use a publishable key in web pages and rotate this one")
		}
		if !merchant.Plan.APIAccess {
			return keyCaller{}, newError(http.StatusForbidden, codeAPIAccessNotInPlan, "the merchant's plan does not include API access")
		}
	}
	if merchant.Suspended {
		return keyCaller{}, newError(http.StatusForbidden, codeMerchantSuspended, "this merchant's chatbot is suspended")
	}
	return keyCaller{merchant: merchant, key: key, origin: origin}, nil
}

// requestOrigin is the browser origin a request comes from: its Origin header or, for a same-origin GET (which
// browsers send without Origin), the runtime's own public origin when Sec-Fetch-Site says "same-origin". A
// request without either is not from a browser page. Claiming same-origin grants nothing a forged Origin header
// would not: the runtime's origin must still be in the merchant's allowedOrigins.
func (s *Server) requestOrigin(r *http.Request) string {
	if origin := r.Header.Get("Origin"); origin != "" {
		return origin
	}
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return s.publicOrigin
	}
	return ""
}

// authenticateOwner verifies the bearer ID token and picks the merchant it may act on: the only one its
// principal owns, or the one named in X-Merchant-ID.
func (s *Server) authenticateOwner(r *http.Request) (*tenant.Bundle, error) {
	// The scheme's name is case-insensitive (RFC 9110, section 11.1).
	scheme, raw, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if raw = strings.TrimSpace(raw); !strings.EqualFold(scheme, "Bearer") || raw == "" {
		return nil, unauthorized(bearerChallenge, "send an ID token as Authorization: Bearer <token>")
	}
	if s.verifier == nil {
		return nil, unauthorized(bearerChallenge, "this runtime has no identity provider configured")
	}
	p, err := s.verifier.Verify(r.Context(), raw)
	if errors.Is(err, issuer.ErrUnavailable) {
		logger(r).Warn("ID token not checked", "reason", err)
		return nil, newError(http.StatusServiceUnavailable, codeUnavailable, "the identity provider does not answer; retry in a minute")
	}
	if err != nil {
		logger(r).Info("ID token refused", "reason", err)
		return nil, unauthorized(invalidTokenChallenge, "the ID token is not valid: it is malformed, expired, or for another issuer or audience")
	}
	owned := s.tenants.OwnedBy(p.Subject, p.Email, p.EmailVerified)
	want := r.Header.Get(headerMerchantID)
	switch {
	case want != "":
		for _, m := range owned {
			if m.MerchantID == want {
				return m, nil
			}
		}
		return nil, newError(http.StatusForbidden, codeForbidden, "you are not an owner of merchant %q", want)
	case len(owned) == 1:
		return owned[0], nil
	case len(owned) == 0:
		return nil, newError(http.StatusForbidden, codeForbidden, "you are not an owner of any merchant")
	default:
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "you own %d merchants; name one in the X-Merchant-ID header", len(owned))
	}
}

// allowCORS lets a browser read the answer to a chat call. The actual check of the origin against the
// merchant's allowed origins happens in authenticateKey; error answers are readable too, so the widget can say
// why it was refused. Preflights carry no API key, so they cannot be checked per merchant and are answered for
// any origin: they grant nothing by themselves.
func allowCORS(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "X-Request-ID, RateLimit, RateLimit-Policy, Retry-After")
}

func preflight(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST, GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-API-Key, X-Visitor-ID, X-Request-ID, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
