// Package bundletest puts tenant bundles where a runtime under test reads them, as the operator would: the
// document tenant.Marshal makes, in a file of a tenants directory or set into a Registry.
package bundletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

// WriteFile writes b's document to path, making its directory first, and fails t if it cannot.
func WriteFile(t testing.TB, path string, b *tenant.Bundle) {
	t.Helper()
	doc := marshal(t, b)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Publish sets b's document into reg as the one of source, and fails t if reg refuses it.
func Publish(t testing.TB, reg *tenant.Registry, source string, b *tenant.Bundle) {
	t.Helper()
	if err := reg.Set(source, marshal(t, b)); err != nil {
		t.Fatal(err)
	}
}

func marshal(t testing.TB, b *tenant.Bundle) []byte {
	t.Helper()
	doc, err := tenant.Marshal(b)
	if err != nil {
		t.Fatalf("marshalling the bundle of %s: %v", b.MerchantID, err)
	}
	return doc
}
