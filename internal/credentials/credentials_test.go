package credentials

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

func TestNewAPIKey(t *testing.T) {
	seen := map[string]bool{}
	for _, prefix := range []string{PublishablePrefix, SecretPrefix} {
		for range 100 {
			key, err := NewAPIKey(prefix)
			if err != nil {
				t.Fatal(err)
			}
			if seen[key] {
				t.Fatalf("duplicate key generated")
			}
			seen[key] = true
			d, err := Describe(key)
			if err != nil {
				t.Fatalf("a generated key does not describe: %v", err)
			}
			sum := sha256.Sum256([]byte(key))
			if d.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("hash mismatch")
			}
			if !strings.HasPrefix(key, d.Prefix+"_") || len(d.Prefix) != len(prefix)+8 || d.ID != d.Prefix[len(prefix):] {
				t.Errorf("prefix %q / id %q do not match the key's start", d.Prefix, d.ID)
			}
			secret := key[len(d.Prefix)+1:]
			if raw, err := base64.RawURLEncoding.DecodeString(secret); err != nil || len(raw) < 32 {
				t.Errorf("secret part is not 256 bits of base64url")
			}
		}
	}
}

func TestDescribeBringYourOwn(t *testing.T) {
	key := "my-own-key-from-vault-0123456789abcdef"
	d, err := Describe(key)
	if err != nil {
		t.Fatal(err)
	}
	if d.Prefix != "" {
		t.Errorf("a foreign key must show no prefix, got %q", d.Prefix)
	}
	if d.ID != d.SHA256[:12] {
		t.Errorf("a foreign key's id must come from its hash, got %q", d.ID)
	}
}

func TestDescribeRejects(t *testing.T) {
	for name, key := range map[string]string{
		"short":      "pk_short",
		"whitespace": "this key has spaces in it and is long enough",
		"newline":    strings.Repeat("a", 40) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Describe(key)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), strings.TrimSpace(key)) {
				t.Errorf("error reveals the key: %v", err)
			}
		})
	}
}

func TestSigningSecret(t *testing.T) {
	s, err := NewSigningSecret()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSigningSecret(s); err != nil {
		t.Errorf("generated secret rejected: %v", err)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if len(raw) != 32 {
		t.Errorf("want 32 bytes, got %d", len(raw))
	}
	for name, bad := range map[string]string{
		"no prefix": base64.StdEncoding.EncodeToString(make([]byte, 32)),
		"not b64":   "whsec_!!!not-base64!!!",
		"too short": "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16)),
		"too long":  "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65)),
	} {
		if err := CheckSigningSecret(bad); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error reveals the secret", name)
		}
	}
}
