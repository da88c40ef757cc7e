package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The operator reads and writes tenant bundles and checks webhook targets by the runtime's rule; it links nothing
// else of the runtime, neither its store nor its delivery code, which would grow the binary and make the operator
// change with every runtime change.
func TestOperatorLinksOnlyTheRuntimeContract(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := []string{"github.com/parley-dev/parley/runtime/tenant", "github.com/parley-dev/parley/runtime/webhook/target"}
	for pkg := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(pkg, "github.com/parley-dev/parley/runtime/") && !slices.Contains(allowed, pkg) {
			t.Errorf("the operator links %s", pkg)
		}
	}
}
