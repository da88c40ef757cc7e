package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The chart's CRDs and RBAC must be what config/ (controller-gen) says: run `make chart` after `make manifests`.
func TestChartMatchesConfig(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Render(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, "charts", "parley", name))
		if err != nil {
			t.Fatalf("%v: run `make chart`", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("charts/parley/%s differs from config/: run `make chart`", name)
		}
	}
}
