//go:build integration

package gitops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// readyReasons are the reasons of the Ready condition declared in api/v1alpha1/conditions.go, read from its
// source so that a reason added there fails TestEveryReasonIsMapped until its health is decided.
func readyReasons(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repo, "api", "v1alpha1", "conditions.go"), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST || !strings.HasPrefix(gen.Doc.Text(), "Reasons of the Ready condition") {
			continue
		}
		for _, spec := range gen.Specs {
			for _, value := range spec.(*ast.ValueSpec).Values {
				lit, ok := value.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a reason that is not a string literal: %#v", value)
				}
				reason, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				reasons = append(reasons, reason)
			}
		}
	}
	if len(reasons) == 0 {
		t.Fatal("no reasons of the Ready condition in conditions.go")
	}
	return reasons
}

// readyHealth is the documented mapping (docs/operating.md, "Argo CD"): the Ready status each reason comes with,
// and the health it maps to. A reason that resolves without anyone's change is Progressing, any other problem
// Degraded.
var readyHealth = map[string]struct{ ready, health string }{
	chatv1alpha1.ReasonReconciled:                 {"True", healthy},
	chatv1alpha1.ReasonSuspended:                  {"True", healthy},
	chatv1alpha1.ReasonOwnersNotAllowed:           {"True", healthy},
	chatv1alpha1.ReasonDisabled:                   {"True", healthy},
	chatv1alpha1.ReasonPlanNotFound:               {"False", progressing},
	chatv1alpha1.ReasonRuntimeNotFound:            {"False", progressing},
	chatv1alpha1.ReasonMerchantNotFound:           {"False", progressing},
	chatv1alpha1.ReasonSecretNotFound:             {"False", progressing},
	chatv1alpha1.ReasonDeploymentNotReady:         {"False", progressing},
	chatv1alpha1.ReasonSyncing:                    {"False", progressing},
	chatv1alpha1.ReasonSyncFailed:                 {"False", degraded},
	chatv1alpha1.ReasonPlanNotAllowed:             {"False", degraded},
	chatv1alpha1.ReasonRuntimeNotAllowed:          {"False", degraded},
	chatv1alpha1.ReasonSecretNotLabelled:          {"False", degraded},
	chatv1alpha1.ReasonInvalidSecret:              {"False", degraded},
	chatv1alpha1.ReasonSecretConflict:             {"False", degraded},
	chatv1alpha1.ReasonSecretsNotGranted:          {"False", degraded},
	chatv1alpha1.ReasonMerchantIDConflict:         {"False", degraded},
	chatv1alpha1.ReasonInvalidBundle:              {"False", degraded},
	chatv1alpha1.ReasonBundleTooLarge:             {"False", degraded},
	chatv1alpha1.ReasonInvalidAllowedNamespaces:   {"False", degraded},
	chatv1alpha1.ReasonExpired:                    {"False", degraded},
	chatv1alpha1.ReasonKeyInUse:                   {"False", degraded},
	chatv1alpha1.ReasonTooManyMerchants:           {"False", degraded},
	chatv1alpha1.ReasonTooManyAPIKeys:             {"False", degraded},
	chatv1alpha1.ReasonTargetNotAllowed:           {"False", degraded},
	chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks: {"False", degraded},
	chatv1alpha1.ReasonWrongNamespace:             {"False", degraded},
	chatv1alpha1.ReasonTargetNamespaceInUse:       {"False", degraded},
	chatv1alpha1.ReasonApplyFailed:                {"False", degraded},
	chatv1alpha1.ReasonNamespaceNotGranted:        {"False", degraded},
	chatv1alpha1.ReasonInvalidBackupSchedule:      {"False", degraded},
	chatv1alpha1.ReasonProviderNotFound:           {"False", degraded},
	chatv1alpha1.ReasonModelNotFound:              {"False", degraded},
	chatv1alpha1.ReasonOwnKeyNotAllowed:           {"False", degraded},
}

// object is a Parley object at generation 2 with a status and Ready condition of that generation.
func object(ready, reason string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "shop", "generation": int64(2)},
		"status": map[string]any{"observedGeneration": int64(2), "conditions": []any{
			map[string]any{"type": "Isolated", "status": "False", "reason": "SharesNamespace", "message": "not this one"},
			map[string]any{"type": "Ready", "status": ready, "reason": reason, "message": "what the operator says",
				"observedGeneration": int64(2)},
		}},
	}
}

func TestEveryReasonIsMapped(t *testing.T) {
	script := scripts[healthKey("Merchant")]
	for _, reason := range readyReasons(t) {
		want, ok := readyHealth[reason]
		if !ok {
			t.Errorf("reason %s: decide its Argo CD health (Progressing if it resolves by itself, else Degraded) "+
				"in charts/parley/argocd/health.lua, readyHealth and docs/operating.md", reason)
			continue
		}
		h, err := runHealth(script, object(want.ready, reason))
		if err != nil {
			t.Fatalf("%s: %v", reason, err)
		}
		if wantMessage := reason + ": what the operator says"; h != (health{status: want.health, message: wantMessage}) {
			t.Errorf("Ready=%s %s: %+v, want %s %q", want.ready, reason, h, want.health, wantMessage)
		}
	}
}

// TestLuaTransientReasonsMatchGo: the script's list of reasons that resolve by themselves is the operator's
// (chatv1alpha1.ReasonResolvesItself), from which it derives the Reconciling and Stalled conditions kstatus (Flux)
// reads, so that Argo CD and Flux cannot disagree on whether an object waits or needs someone.
func TestLuaTransientReasonsMatchGo(t *testing.T) {
	script := scripts[healthKey("Merchant")]
	for _, reason := range append(readyReasons(t), "SomethingNew") {
		h, err := runHealth(script, object("False", reason))
		if err != nil {
			t.Fatalf("%s: %v", reason, err)
		}
		want := degraded
		if chatv1alpha1.ReasonResolvesItself(reason) {
			want = progressing
		}
		if h.status != want {
			t.Errorf("Ready=False %s: the script says %s, api/v1alpha1.ReasonResolvesItself means %s: align the "+
				"transient list of charts/parley/argocd/health.lua or api/v1alpha1/conditions.go", reason, h.status, want)
		}
	}
}

// TestHealthEdges covers what the operator's objects show only in passing: a condition of an older generation,
// Ready=Unknown, a reason this script does not know.
func TestHealthEdges(t *testing.T) {
	script := scripts[healthKey("Merchant")]
	staleCondition := object("True", chatv1alpha1.ReasonReconciled)
	staleCondition["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["observedGeneration"] = int64(1)
	noReady := object("True", chatv1alpha1.ReasonReconciled)
	noReady["status"].(map[string]any)["conditions"] = []any{}
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want health
	}{
		{"condition of an older generation", staleCondition,
			health{progressing, "Waiting for the Parley operator to reconcile generation 2"}},
		{"no Ready condition", noReady, health{progressing, "Waiting for the Parley operator to report"}},
		{"Ready=Unknown", object("Unknown", "Reconciling"), health{progressing, "Reconciling: what the operator says"}},
		{"a reason added later", object("False", "SomethingNew"), health{degraded, "SomethingNew: what the operator says"}},
	} {
		h, err := runHealth(script, tc.obj)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if h != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, h, tc.want)
		}
	}
}
