// Package credentials generates and checks the secrets the operator hands out: API keys and webhook signing
// secrets. Plaintext values leave this package only to be written into the merchant's own Secret.
package credentials

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Key prefixes say at a glance what a leaked key is and who should have had it.
const (
	PublishablePrefix = "pk_"
	SecretPrefix      = "sk_"
)

// MinKeyLength is the shortest bring-your-own API key accepted.
const MinKeyLength = 32

const (
	keySecretBytes     = 32 // 256 bits of secret per key
	signingSecretBytes = 32
	minSigningBytes    = 24
	// maxSigningBytes is Standard Webhooks' largest secret: a larger one would only grow the tenant bundle,
	// which a Secret holds in at most 1 MiB.
	maxSigningBytes = 64
	signingPrefix   = "whsec_"
)

// lowercase base32 without padding: readable, case-insensitive, no ambiguous punctuation.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// A generated key is <prefix><8-char id>_<43-char base64url secret>.
var generatedKey = regexp.MustCompile(`^(pk_|sk_)([a-z2-7]{8})_[A-Za-z0-9_-]{43}$`)

var printable = regexp.MustCompile(`^[\x21-\x7e]+$`)

// Key describes an API key without revealing it.
type Key struct {
	// ID identifies the key in logs and in the bundle.
	ID string
	// Prefix is the key's recognisable start, safe to show; empty for keys not in Parley's format.
	Prefix string
	// SHA256 is the lowercase hex SHA-256 of the whole key.
	SHA256 string
}

// NewAPIKey generates a key with 256 bits from crypto/rand. prefix is PublishablePrefix or SecretPrefix.
func NewAPIKey(prefix string) (string, error) {
	id := make([]byte, 5)
	secret := make([]byte, keySecretBytes)
	if _, err := rand.Read(id); err != nil {
		return "", fmt.Errorf("generating API key: %w", err)
	}
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("generating API key: %w", err)
	}
	return prefix + idEncoding.EncodeToString(id) + "_" + base64.RawURLEncoding.EncodeToString(secret), nil
}

// Describe checks an API key and describes it. A key in Parley's format keeps its own ID and prefix; another
// (bring-your-own) key is identified by the start of its hash and shows no prefix, so nothing of it is revealed.
// Errors never contain the key.
func Describe(key string) (Key, error) {
	if len(key) < MinKeyLength {
		return Key{}, fmt.Errorf("the API key is %d characters long; at least %d are required", len(key), MinKeyLength)
	}
	if !printable.MatchString(key) {
		return Key{}, errors.New("the API key contains whitespace or non-printable characters")
	}
	sum := sha256.Sum256([]byte(key))
	hash := hex.EncodeToString(sum[:])
	if m := generatedKey.FindStringSubmatch(key); m != nil {
		return Key{ID: m[2], Prefix: m[1] + m[2], SHA256: hash}, nil
	}
	return Key{ID: hash[:12], SHA256: hash}, nil
}

// NewSigningSecret generates a Standard Webhooks signing secret: "whsec_" and base64 of 32 random bytes.
func NewSigningSecret() (string, error) {
	b := make([]byte, signingSecretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating signing secret: %w", err)
	}
	return signingPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// CheckSigningSecret reports whether s is a usable Standard Webhooks signing secret. Errors never contain it.
func CheckSigningSecret(s string) error {
	raw, ok := strings.CutPrefix(s, signingPrefix)
	if !ok {
		return errors.New(`the signing secret does not start with "whsec_"`)
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return errors.New(`the signing secret is not "whsec_" followed by standard base64`)
	}
	if len(b) < minSigningBytes || len(b) > maxSigningBytes {
		return fmt.Errorf("the signing secret has %d bytes; %d to %d are required", len(b), minSigningBytes, maxSigningBytes)
	}
	return nil
}
