package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

// The ClusterRole bound in runtimes' target namespaces grants what the markers grant the operator in its own.
func TestRuntimeNamespaceRoleMatchesMarkers(t *testing.T) {
	rules := func(file string, doc int) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", file))
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(string(data), "\n---\n")
		if len(docs) <= doc {
			t.Fatalf("%s has no document %d", file, doc)
		}
		_, r, ok := strings.Cut(docs[doc], "\nrules:\n")
		if !ok {
			t.Fatalf("%s has no rules", file)
		}
		return r
	}
	if got, want := rules("runtime_namespace_role.yaml", 0), rules("role.yaml", 1); got != want {
		t.Errorf("config/rbac/runtime_namespace_role.yaml's rules differ from the Role in role.yaml:\n%s\nwant\n%s", got, want)
	}
}
