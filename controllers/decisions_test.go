package controllers

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The decisions of the reconcilers are pure functions; these tables pin them down without an API server.

func TestCheck(t *testing.T) {
	errRetry := errors.New("connection refused")
	found := newProblem(chatv1alpha1.ReasonSecretNotFound, "Secret s does not exist")
	later := newProblem(chatv1alpha1.ReasonExpired, "expired")
	ok := func() error { return nil }
	for _, tc := range []struct {
		name    string
		steps   []func() error
		problem *problem
		err     error
		ran     int
	}{
		{"no steps", nil, nil, nil, 0},
		{"every step passes", []func() error{ok, ok, ok}, nil, nil, 3},
		{"the first problem stops", []func() error{ok, func() error { return found }, func() error { return later }}, found, nil, 2},
		{"an error stops and is retried", []func() error{func() error { return errRetry }, ok}, nil, errRetry, 1},
		{"a wrapped problem is a problem", []func() error{func() error { return errors.Join(found) }, ok}, found, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			steps := make([]func() error, len(tc.steps))
			for i, s := range tc.steps {
				steps[i] = func() error { ran++; return s() }
			}
			p, err := check(steps...)
			if p != tc.problem || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) || ran != tc.ran {
				t.Errorf("check = (%v, %v) after %d steps, want (%v, %v) after %d", p, err, ran, tc.problem, tc.err, tc.ran)
			}
		})
	}
}

func TestReadyFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *problem
		want metav1.Condition
	}{
		{"success is True, Reconciled", nil, metav1.Condition{Type: chatv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: chatv1alpha1.ReasonReconciled, Message: "fine", ObservedGeneration: 7}},
		{"a problem is False with its reason", newProblem(chatv1alpha1.ReasonMerchantNotFound, "Merchant %s does not exist", "m"),
			metav1.Condition{Type: chatv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: chatv1alpha1.ReasonMerchantNotFound, Message: "Merchant m does not exist", ObservedGeneration: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readyFrom(7, tc.p, "fine"); got != tc.want {
				t.Errorf("readyFrom = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadyEvent(t *testing.T) {
	cond := func(status metav1.ConditionStatus, reason, message string) *metav1.Condition {
		return &metav1.Condition{Type: chatv1alpha1.ConditionReady, Status: status, Reason: reason, Message: message}
	}
	for _, tc := range []struct {
		name      string
		before    *metav1.Condition
		now       *metav1.Condition
		first     firstReady
		eventType string
		announce  bool
	}{
		{"first Ready=True, announced", nil, cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"),
			announceFirstReady, corev1.EventTypeNormal, true},
		{"first Ready=True, quiet", nil, cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"),
			quietFirstReady, "", false},
		{"first Ready=False", nil, cond(metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotFound, "no plan"),
			announceFirstReady, corev1.EventTypeWarning, true},
		{"first Ready=False, even where a first Ready is quiet", nil,
			cond(metav1.ConditionFalse, chatv1alpha1.ReasonSecretsNotGranted, "no grant"), quietFirstReady, corev1.EventTypeWarning, true},
		{"became Ready", cond(metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotFound, "no plan"),
			cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"), announceFirstReady, corev1.EventTypeNormal, true},
		{"became Ready where a first Ready is quiet", cond(metav1.ConditionFalse, chatv1alpha1.ReasonExpired, "expired"),
			cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"), quietFirstReady, corev1.EventTypeNormal, true},
		{"stopped being Ready", cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"),
			cond(metav1.ConditionFalse, chatv1alpha1.ReasonExpired, "expired"), quietFirstReady, corev1.EventTypeWarning, true},
		{"another reason, same status", cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"),
			cond(metav1.ConditionTrue, chatv1alpha1.ReasonDisabled, "paused"), quietFirstReady, corev1.EventTypeNormal, true},
		{"unchanged", cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"),
			cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"), announceFirstReady, "", false},
		{"a new message alone is quiet", cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "1 merchant"),
			cond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "2 merchants"), announceFirstReady, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eventType, announce := readyEvent(tc.before, *tc.now, tc.first)
			if eventType != tc.eventType || announce != tc.announce {
				t.Errorf("readyEvent = (%q, %v), want (%q, %v)", eventType, announce, tc.eventType, tc.announce)
			}
		})
	}
}

func TestNeedsGenerating(t *testing.T) {
	owner := apiKey("ns", "k", "m", chatv1alpha1.APIKeyPublishable)
	owner.UID = "owner-uid"
	// secret is a Secret controlled by the object of the given UID, or by none.
	secret := func(controller types.UID) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "k-key"}}
		if controller != "" {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "chat.parley.dev/v1alpha1", Kind: "APIKey",
				Name: "k", UID: controller, Controller: new(true)}}
		}
		return s
	}
	errRetry := errors.New("timeout")
	for _, tc := range []struct {
		name      string
		existing  *corev1.Secret
		lookupErr error
		generate  bool
		reason    string // of the problem returned, if any
		err       error  // returned to retry, if any
	}{
		{"missing: generate", nil, newProblem(chatv1alpha1.ReasonSecretNotFound, "missing"), true, "", nil},
		{"the owner's own: keep it", secret(owner.UID), nil, false, "", nil},
		{"someone else's: conflict", secret("someone-else"), nil, false, chatv1alpha1.ReasonSecretConflict, nil},
		{"nobody's: conflict", secret(""), nil, false, chatv1alpha1.ReasonSecretConflict, nil},
		{"unlabelled: conflict", nil, newProblem(chatv1alpha1.ReasonSecretNotLabelled, "unlabelled"), false,
			chatv1alpha1.ReasonSecretConflict, nil},
		{"the lookup failed: retry", nil, errRetry, false, "", errRetry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			generate, err := needsGenerating(tc.existing, tc.lookupErr, owner, "k-key")
			p, err := asProblem(err)
			reason := ""
			if p != nil {
				reason = p.reason
			}
			if generate != tc.generate || reason != tc.reason || !errors.Is(err, tc.err) {
				t.Errorf("needsGenerating = (%v, problem %q, error %v), want (%v, problem %q, error %v)",
					generate, reason, err, tc.generate, tc.reason, tc.err)
			}
		})
	}
}

func TestKeyExpiry(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	for _, tc := range []struct {
		name      string
		expiresAt *metav1.Time
		expired   bool
		requeue   time.Duration
	}{
		{"never expires", nil, false, 0},
		{"expires in an hour: look again then", at(time.Hour), false, time.Hour},
		{"expires now", at(0), true, 0},
		{"expired an hour ago", at(-time.Hour), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, requeue := keyExpiry(tc.expiresAt, now)
			if (p != nil) != tc.expired || requeue != tc.requeue {
				t.Fatalf("keyExpiry = (%v, %s), want expired %v, requeue %s", p, requeue, tc.expired, tc.requeue)
			}
			if p != nil && (p.reason != chatv1alpha1.ReasonExpired || p.message != "the key expired at "+tc.expiresAt.UTC().Format(time.RFC3339)) {
				t.Errorf("problem = %v, want Expired with the expiry time", p)
			}
		})
	}
}

func TestWebhookCondition(t *testing.T) {
	refused := newProblem(chatv1alpha1.ReasonTargetNotAllowed, "private")
	for _, tc := range []struct {
		name     string
		webhooks bool
		disabled bool
		target   *problem
		status   metav1.ConditionStatus
		reason   string
	}{
		{"plan with webhooks", true, false, nil, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled},
		{"disabled on purpose is healthy", true, true, nil, metav1.ConditionTrue, chatv1alpha1.ReasonDisabled},
		{"plan without webhooks", false, false, nil, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks},
		{"plan without webhooks wins over disabled", false, true, nil, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks},
		{"refused target", true, false, refused, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNotAllowed},
		{"refused target wins over disabled", true, true, refused, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNotAllowed},
		{"plan without webhooks wins over refused target", false, false, refused, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := webhookCondition(3, plan("p", 1, tc.webhooks), tc.disabled, tc.target)
			if got.Type != chatv1alpha1.ConditionReady || got.Status != tc.status || got.Reason != tc.reason || got.ObservedGeneration != 3 {
				t.Errorf("webhookCondition = %+v, want Ready=%s, %s, generation 3", got, tc.status, tc.reason)
			}
		})
	}
}

func TestKeyTakenByOther(t *testing.T) {
	early := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	late := metav1.NewTime(early.Add(time.Hour))
	a := func(created metav1.Time, name string) keyHolder {
		return keyHolder{source: "a/shop", created: created, name: name}
	}
	b := func(created metav1.Time, name string) keyHolder {
		return keyHolder{source: "b/shop", created: created, name: name}
	}
	cases := []struct {
		name    string
		holders []keyHolder
		want    bool
	}{
		{"nobody publishes it", nil, false},
		{"only we publish it", []keyHolder{a(early, "t-a")}, false},
		{"another merchant publishes it", []keyHolder{b(late, "t-b")}, true},
		{"both, ours older", []keyHolder{a(early, "t-a"), b(late, "t-b")}, false},
		{"both, theirs older", []keyHolder{a(late, "t-a"), b(early, "t-b")}, true},
		{"both at once, our name first", []keyHolder{b(early, "t-b"), a(early, "t-a")}, false},
		{"both at once, their name first", []keyHolder{a(early, "t-z"), b(early, "t-b")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := keyTakenByOther(c.holders, "a/shop"); got != c.want {
				t.Errorf("keyTakenByOther = %v, want %v", got, c.want)
			}
		})
	}
}

func TestWithoutRevokedKeys(t *testing.T) {
	k := func(hash string) tenant.APIKey { return tenant.APIKey{ID: "id-" + hash, SHA256: hash} }
	u := func(hash string) render.ResolvedKey { return render.ResolvedKey{SHA256: hash} }
	cases := []struct {
		name      string
		published []tenant.APIKey
		usable    []render.ResolvedKey
		want      []string
		changed   bool
	}{
		{"all still usable", []tenant.APIKey{k("a"), k("b")}, []render.ResolvedKey{u("b"), u("a")}, []string{"a", "b"}, false},
		{"one deleted", []tenant.APIKey{k("a"), k("b")}, []render.ResolvedKey{u("b")}, []string{"b"}, true},
		{"all deleted", []tenant.APIKey{k("a")}, nil, nil, true},
		{"new usable keys are not added", []tenant.APIKey{k("a")}, []render.ResolvedKey{u("a"), u("c")}, []string{"a"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kept, changed := withoutRevokedKeys(c.published, c.usable)
			var got []string
			for _, k := range kept {
				got = append(got, k.SHA256)
			}
			if !slices.Equal(got, c.want) || changed != c.changed {
				t.Errorf("got %v changed=%v, want %v changed=%v", got, changed, c.want, c.changed)
			}
		})
	}
}

func TestGranted(t *testing.T) {
	gold := map[string]string{"tier": "gold"}
	cases := []struct {
		name     string
		selector *metav1.LabelSelector
		labels   map[string]string
		want     bool
	}{
		{"unset grants all", nil, nil, true},
		{"empty grants all", &metav1.LabelSelector{}, nil, true},
		{"matching labels", &metav1.LabelSelector{MatchLabels: gold}, gold, true},
		{"other labels", &metav1.LabelSelector{MatchLabels: gold}, map[string]string{"tier": "free"}, false},
		{"no labels", &metav1.LabelSelector{MatchLabels: gold}, nil, false},
		{"expression", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}}}}, gold, true},
		{"selector that does not parse grants none", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: "Near", Values: []string{"gold"}}}}, gold, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := granted(c.selector, c.labels); got != c.want {
				t.Errorf("granted = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSuspended(t *testing.T) {
	platform := map[string]string{chatv1alpha1.SuspendedLabel: "true"}
	cases := []struct {
		name   string
		spec   bool
		labels map[string]string
		want   bool
	}{
		{"neither", false, nil, false},
		{"by the tenant", true, nil, true},
		{"by the platform, the tenant cleared spec", false, platform, true},
		{"both", true, platform, true},
		{"label not true", false, map[string]string{chatv1alpha1.SuspendedLabel: "no"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &chatv1alpha1.Merchant{Spec: chatv1alpha1.MerchantSpec{Suspended: c.spec}}
			if got := suspended(m, c.labels); got != c.want {
				t.Errorf("suspended = %v, want %v", got, c.want)
			}
		})
	}
}

func TestGrantedOwners(t *testing.T) {
	grant := func(domains string) map[string]string {
		return map[string]string{chatv1alpha1.OwnerEmailDomainsAnnotation: domains}
	}
	email := func(e string) tenant.Owner { return tenant.Owner{Email: e} }
	subject := func(s string) tenant.Owner { return tenant.Owner{Subject: s} }
	cases := []struct {
		name        string
		owners      []tenant.Owner
		annotations map[string]string
		kept        []tenant.Owner
		leftOut     []string
	}{
		{"no grant keeps everyone", []tenant.Owner{email("a@x.example")}, nil, []tenant.Owner{email("a@x.example")}, nil},
		{"granted domain", []tenant.Owner{email("a@x.example")}, grant("x.example"), []tenant.Owner{email("a@x.example")}, nil},
		{"ASCII case and spaces", []tenant.Owner{email("a@X.Example")}, grant(" y.example , x.EXAMPLE "), []tenant.Owner{email("a@X.Example")}, nil},
		{"other domain", []tenant.Owner{email("a@y.example")}, grant("x.example"), nil, []string{"a@y.example"}},
		{"subdomain is not the domain", []tenant.Owner{email("a@sub.x.example")}, grant("x.example"), nil, []string{"a@sub.x.example"}},
		{"suffix trick", []tenant.Owner{email("a@x.example.evil.example")}, grant("x.example"), nil, []string{"a@x.example.evil.example"}},
		{"Kelvin sign folds only in Unicode", []tenant.Owner{email("a@\u212a.example")}, grant("k.example"), nil, []string{"a@\u212a.example"}},
		{"empty grant allows no email", []tenant.Owner{email("a@x.example")}, grant(""), nil, []string{"a@x.example"}},
		{"a domain grant allows no subject", []tenant.Owner{email("a@x.example"), subject("s")}, grant("x.example"),
			[]tenant.Owner{email("a@x.example")}, []string{"subject s"}},
		{"granted subject", []tenant.Owner{subject("s1"), subject("s2"), email("a@x.example")},
			map[string]string{chatv1alpha1.OwnerSubjectsAnnotation: " s1 ,s3"},
			[]tenant.Owner{subject("s1")}, []string{"subject s2", "a@x.example"}},
		{"subjects exactly", []tenant.Owner{subject("S1"), subject("s1x")}, map[string]string{chatv1alpha1.OwnerSubjectsAnnotation: "s1"},
			nil, []string{"subject S1", "subject s1x"}},
		{"both grants", []tenant.Owner{subject("s1"), email("a@x.example")},
			map[string]string{chatv1alpha1.OwnerSubjectsAnnotation: "s1", chatv1alpha1.OwnerEmailDomainsAnnotation: "x.example"},
			[]tenant.Owner{subject("s1"), email("a@x.example")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kept, leftOut := grantedOwners(c.owners, c.annotations)
			if !slices.Equal(kept, c.kept) || !slices.Equal(leftOut, c.leftOut) {
				t.Errorf("kept %v left out %v, want %v and %v", kept, leftOut, c.kept, c.leftOut)
			}
		})
	}
}

func TestWebhookTarget(t *testing.T) {
	cases := []struct {
		url          string
		allowPrivate bool
		refused      bool
	}{
		{"https://crm.example.com/hooks", false, false},
		{"https://93.184.215.14/hooks", false, false},
		{"http://localhost:8080/hooks", false, true},
		{"http://api.localhost/hooks", false, true},
		{"http://127.0.0.1/hooks", false, true},
		{"http://[::1]/hooks", false, true},
		{"https://10.0.0.7/hooks", false, true},
		{"https://169.254.169.254/latest/meta-data", false, true},
		{"https://[fd00::1]/hooks", false, true},
		{"https://[::ffff:10.0.0.1]/hooks", false, true},
		{"http://crm.shop.svc/hooks", false, true},
		{"http://crm.shop.svc.cluster.local/hooks", false, true},
		{"https://CRM.Shop.SVC/hooks", false, true},
		{"https://crm/hooks", false, true},
		{"https://kubernetes.default.svc.cluster.local.:443/x", false, true},
		{"https://kubernetes.default.svc./x", false, true},
		{"https://localhost./x", false, true},
		{"https://crm./hooks", false, true},
		{"https://crm.example.com./hooks", false, false},
		{"http://crm.shop.svc/hooks", true, false},
		{"http://127.0.0.1/hooks", true, false},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			p := webhookTarget(c.url, c.allowPrivate)
			if (p != nil) != c.refused {
				t.Fatalf("refused = %v, want %v", p != nil, c.refused)
			}
			if p != nil && p.reason != chatv1alpha1.ReasonTargetNotAllowed {
				t.Errorf("reason %s", p.reason)
			}
		})
	}
}

func TestIDTaken(t *testing.T) {
	early := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	late := metav1.NewTime(early.Add(time.Hour))
	bundle := func(ns, source string, created metav1.Time, retired bool) corev1.Secret {
		s := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-shop", CreationTimestamp: created,
			Annotations: map[string]string{render.SourceAnnotation: source}}}
		if retired {
			s.Annotations[render.RetiredAnnotation] = early.Format(time.RFC3339)
		}
		return s
	}
	for _, tc := range []struct {
		name                string
		bundles             []corev1.Secret
		taken, takenRetired bool
	}{
		{name: "free", bundles: nil},
		{name: "ours, on another runtime", bundles: []corev1.Secret{bundle("rt-b", "a/shop", early, false)}},
		{name: "ours, retired on another runtime", bundles: []corev1.Secret{bundle("rt-b", "a/shop", early, true)}},
		{name: "another merchant's, on another runtime", bundles: []corev1.Secret{bundle("rt-b", "b/shop", late, false)}, taken: true},
		{name: "a deleted merchant's, on another runtime", bundles: []corev1.Secret{bundle("rt-b", "b/shop", late, true)},
			taken: true, takenRetired: true},
		{name: "published at once, ours older", bundles: []corev1.Secret{bundle("rt-a", "a/shop", early, false),
			bundle("rt-b", "b/shop", late, false)}},
		{name: "published at once, theirs older", bundles: []corev1.Secret{bundle("rt-a", "a/shop", late, false),
			bundle("rt-b", "b/shop", early, false)}, taken: true},
		{name: "published in the same second, namespace decides", bundles: []corev1.Secret{bundle("rt-b", "a/shop", early, false),
			bundle("rt-a", "b/shop", early, false)}, taken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taken, retired := idTaken(tc.bundles, "a/shop")
			if taken != tc.taken || (taken && retired != tc.takenRetired) {
				t.Errorf("idTaken = %v (retired %v), want %v (retired %v)", taken, retired, tc.taken, tc.takenRetired)
			}
		})
	}
}

func TestTargetTaken(t *testing.T) {
	early := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	late := metav1.NewTime(early.Add(time.Hour))
	rt := func(name, target string, created metav1.Time) chatv1alpha1.ChatRuntime {
		return chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "parley-system", Name: name, CreationTimestamp: created},
			Spec: chatv1alpha1.ChatRuntimeSpec{TargetNamespace: target}}
	}
	for _, tc := range []struct {
		name   string
		self   chatv1alpha1.ChatRuntime
		others []chatv1alpha1.ChatRuntime
		want   bool
	}{
		{"alone", rt("b", "rt-b", late), nil, false},
		{"another namespace", rt("b", "rt-b", late), []chatv1alpha1.ChatRuntime{rt("a", "rt-a", early)}, false},
		{"an older runtime there", rt("b", "rt-a", late), []chatv1alpha1.ChatRuntime{rt("a", "rt-a", early)}, true},
		{"a younger runtime there", rt("a", "rt-a", early), []chatv1alpha1.ChatRuntime{rt("b", "rt-a", late)}, false},
		{"as old, name decides", rt("b", "rt-a", early), []chatv1alpha1.ChatRuntime{rt("a", "rt-a", early)}, true},
		{"itself in the list", rt("a", "rt-a", early), []chatv1alpha1.ChatRuntime{rt("a", "rt-a", early)}, false},
		{"the operator's namespace is shared", rt("b", "", late), []chatv1alpha1.ChatRuntime{rt("a", "", early)}, false},
		{"named as target, the operator's namespace is shared", rt("b", "parley-system", late),
			[]chatv1alpha1.ChatRuntime{rt("a", "", early)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := targetTaken(&tc.self, tc.others, "parley-system"); got != tc.want {
				t.Errorf("targetTaken = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSecretPending(t *testing.T) {
	missing := newProblem(chatv1alpha1.ReasonSecretNotFound, "Secret %s does not exist", "k-key")
	readyAt := func(status metav1.ConditionStatus, reason string, generation int64) []metav1.Condition {
		return []metav1.Condition{{Type: chatv1alpha1.ConditionReady, Status: status, Reason: reason, ObservedGeneration: generation}}
	}
	for _, tc := range []struct {
		name                 string
		generated            bool
		p                    *problem
		observed, generation int64
		conds                []metav1.Condition
		want                 bool
	}{
		{"a new owner's generated Secret is yet to come", true, missing, 0, 1, nil, true},
		{"an edited owner's missing Secret is yet to come", true, missing, 1, 2, readyAt(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, 1), true},
		{"once the owner is reconciled, a missing Secret is its problem", true, missing, 1, 1,
			readyAt(metav1.ConditionFalse, chatv1alpha1.ReasonSecretNotFound, 1), false},
		{"the owner found its Secret usable: its event is yet to reach this cache", true, missing, 1, 1,
			readyAt(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, 1), true},
		{"an owner Ready at an older generation does not vouch for its Secret", true, missing, 2, 2,
			readyAt(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, 1), false},
		{"an owner not Ready for another reason is not waited for", true, missing, 1, 1,
			readyAt(metav1.ConditionFalse, chatv1alpha1.ReasonExpired, 1), false},
		{"a Secret brought along is never waited for", false, missing, 0, 1, nil, false},
		{"another problem is not waited for", true, newProblem(chatv1alpha1.ReasonInvalidSecret, "bad"), 0, 1, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := secretPending(tc.generated, tc.p, tc.observed, tc.generation, tc.conds); got != tc.want {
				t.Errorf("secretPending = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBundleMerchantID(t *testing.T) {
	secret := func(labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "parley-system", Name: "parley-tenant-x", Labels: labels}}
	}
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		want   []string
	}{
		{"a served bundle", secret(map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant,
			chatv1alpha1.TenantLabel: "true", chatv1alpha1.MerchantIDLabel: "shop-1"}), []string{"shop-1"}},
		{"a retired bundle keeps its ID", secret(map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant,
			chatv1alpha1.TenantLabel: "retired", chatv1alpha1.MerchantIDLabel: "shop-1"}), []string{"shop-1"}},
		{"a key Secret with the label is no bundle", secret(map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey,
			chatv1alpha1.MerchantIDLabel: "shop-1"}), nil},
		{"a bundle without an ID", secret(map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bundleMerchantID(tc.secret); !slices.Equal(got, tc.want) {
				t.Errorf("bundleMerchantID = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestApplyProblem(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "parley-runtime",
		errors.New("no RBAC policy matched"))
	for _, tc := range []struct {
		name, target string
		err          error
		reason       string
	}{
		{"forbidden in a target namespace", "parley-runtime", forbidden, chatv1alpha1.ReasonNamespaceNotGranted},
		{"forbidden in the operator's namespace", "parley-system", forbidden, chatv1alpha1.ReasonApplyFailed},
		{"any other failure", "parley-runtime", errors.New("connection refused"), chatv1alpha1.ReasonApplyFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, message := applyProblem(tc.err, tc.target, "parley-system")
			if reason != tc.reason {
				t.Errorf("reason %s, want %s", reason, tc.reason)
			}
			if !strings.Contains(message, tc.err.Error()) {
				t.Errorf("message %q lost the API server's error %q", message, tc.err)
			}
			if reason == chatv1alpha1.ReasonNamespaceNotGranted && !strings.Contains(message, "parley-runtime-namespace") {
				t.Errorf("message %q does not say which ClusterRole to bind", message)
			}
		})
	}
}

func TestStatusOnly(t *testing.T) {
	base := func() *chatv1alpha1.ChatRuntime {
		return &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 2, ResourceVersion: "10",
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}, Finalizers: []string{runtimeFinalizer}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*chatv1alpha1.ChatRuntime)
		want   bool
	}{
		{"status and resourceVersion", func(rt *chatv1alpha1.ChatRuntime) { rt.Status.Tenants = 7; rt.ResourceVersion = "11" }, true},
		{"managedFields", func(rt *chatv1alpha1.ChatRuntime) {
			rt.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "parley-operator", Subresource: "status"}}
		}, true},
		{"spec (generation)", func(rt *chatv1alpha1.ChatRuntime) { rt.Generation = 3 }, false},
		{"a deletion starting (generation)", func(rt *chatv1alpha1.ChatRuntime) {
			rt.Generation, rt.DeletionTimestamp = 3, &metav1.Time{Time: time.Now()}
		}, false},
		{"labels", func(rt *chatv1alpha1.ChatRuntime) { rt.Labels["team"] = "b" }, false},
		{"annotations", func(rt *chatv1alpha1.ChatRuntime) { rt.Annotations = nil }, false},
		{"finalizers", func(rt *chatv1alpha1.ChatRuntime) { rt.Finalizers = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updated := base()
			tc.change(updated)
			if got := statusOnly(base(), updated); got != tc.want {
				t.Errorf("statusOnly = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFinalizerAddedOnly(t *testing.T) {
	base := func() *chatv1alpha1.Merchant {
		return &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Generation: 1, ResourceVersion: "10",
			Finalizers: []string{"example.com/other"}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*chatv1alpha1.Merchant)
		want   bool
	}{
		{"the finalizer added, with a status", func(m *chatv1alpha1.Merchant) {
			m.Finalizers = append(m.Finalizers, merchantFinalizer)
			m.Status.MerchantID, m.ResourceVersion = "shop", "11"
		}, true},
		{"nothing but the status", func(m *chatv1alpha1.Merchant) { m.Status.MerchantID = "shop" }, false},
		{"another finalizer added", func(m *chatv1alpha1.Merchant) { m.Finalizers = append(m.Finalizers, "example.com/more") }, false},
		{"the finalizer added and another removed", func(m *chatv1alpha1.Merchant) { m.Finalizers = []string{merchantFinalizer} }, false},
		{"the finalizer added with a spec change", func(m *chatv1alpha1.Merchant) {
			m.Finalizers, m.Generation = append(m.Finalizers, merchantFinalizer), 2
		}, false},
		{"the finalizer added with a label", func(m *chatv1alpha1.Merchant) {
			m.Finalizers, m.Labels = append(m.Finalizers, merchantFinalizer), map[string]string{"team": "a"}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updated := base()
			tc.change(updated)
			if got := finalizerAddedOnly(base(), updated, merchantFinalizer); got != tc.want {
				t.Errorf("finalizerAddedOnly = %v, want %v", got, tc.want)
			}
		})
	}
	had := base()
	had.Finalizers = append(had.Finalizers, merchantFinalizer)
	if finalizerAddedOnly(had, had, merchantFinalizer) {
		t.Error("an update of a Merchant that had the finalizer already counts as adding it")
	}
}

func TestNotGeneratedCreate(t *testing.T) {
	controlledBy := func(apiVersion, kind string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "widget-apikey", Namespace: "shop"}}
		if kind != "" {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "widget", Controller: new(true)}}
		}
		return s
	}
	own := chatv1alpha1.GroupVersion.String()
	pass := notGeneratedCreate("APIKey")
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		want   bool
	}{
		{"generated for an APIKey", controlledBy(own, "APIKey"), false},
		{"brought along", controlledBy("", ""), true},
		{"generated for a Webhook", controlledBy(own, "Webhook"), true},
		{"controlled by another group's APIKey", controlledBy("example.com/v1", "APIKey"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pass.Create(event.CreateEvent{Object: tc.secret}); got != tc.want {
				t.Errorf("Create passes = %v, want %v", got, tc.want)
			}
			if !pass.Update(event.UpdateEvent{ObjectOld: tc.secret, ObjectNew: tc.secret}) || !pass.Delete(event.DeleteEvent{Object: tc.secret}) {
				t.Error("an update or deletion of the Secret does not pass")
			}
		})
	}
}

func TestFirstPublishWait(t *testing.T) {
	arrived := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	m := &chatv1alpha1.Merchant{}
	for _, tc := range []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		{"just arrived", arrived.Add(200 * time.Millisecond), 800 * time.Millisecond},
		{"quiet long enough", arrived.Add(2 * time.Second), -time.Second},
	} {
		if got := firstPublishWait(m, arrived, tc.now); got != tc.want {
			t.Errorf("%s: wait %s, want %s", tc.name, got, tc.want)
		}
	}
	m.Status.Conditions = []metav1.Condition{{Type: chatv1alpha1.ConditionReady, Status: metav1.ConditionFalse}}
	if got := firstPublishWait(m, arrived, arrived); got != 0 {
		t.Errorf("a Merchant reconciled before waits %s", got)
	}
}

// TestArrivals shows that a new Merchant waits for the last of its keys and webhooks to arrive, however they are
// spread, and that a published one does not wait.
func TestArrivals(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := newArrivals(func() time.Time { return now })
	m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "a"}}
	key := client.ObjectKeyFromObject(m)
	if got := a.wait(m); got != newMerchantDelay {
		t.Errorf("a Merchant reconciled before its arrival was recorded waits %s, want %s", got, newMerchantDelay)
	}
	now = now.Add(700 * time.Millisecond)
	a.saw(key) // its APIKey
	now = now.Add(700 * time.Millisecond)
	a.saw(key) // its Webhook, 1.4 s after it
	now = now.Add(400 * time.Millisecond)
	if got := a.wait(m); got != 600*time.Millisecond {
		t.Errorf("0.4 s after its last webhook arrived it waits %s, want 0.6 s", got)
	}
	m.Status.Conditions = []metav1.Condition{{Type: chatv1alpha1.ConditionReady, Status: metav1.ConditionTrue}}
	if got := a.wait(m); got != 0 {
		t.Errorf("a published Merchant waits %s", got)
	}
	a.forget(key)
	now = now.Add(arrivalTTL)
	other := types.NamespacedName{Namespace: "b", Name: "shop"}
	a.saw(other)
	now = now.Add(arrivalTTL)
	a.saw(key)
	if _, ok := a.last[other]; ok || len(a.last) != 1 {
		t.Errorf("arrivals older than %s are kept: %v", arrivalTTL, a.last)
	}
}

func TestMerchantWait(t *testing.T) {
	created := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		{"new", created.Add(time.Second), newReferrerWait - time.Second},
		{"old enough", created.Add(newReferrerWait), 0},
		{"old", created.Add(time.Hour), 0},
		{"a clock behind the API server's waits no longer than newReferrerWait", created.Add(-time.Hour), newReferrerWait},
	} {
		if got := merchantWait(created, tc.now); got != tc.want {
			t.Errorf("%s: wait %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestBundleTooLarge(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want bool
	}{
		{0, false}, {maxBundleBytes, false}, {maxBundleBytes + 1, true}, {257 << 10, true}, {2 << 20, true},
	} {
		p := bundleTooLarge(tc.n)
		if (p != nil) != tc.want {
			t.Errorf("bundleTooLarge(%d) = %v, want a problem: %v", tc.n, p, tc.want)
		}
		if p != nil && (p.reason != chatv1alpha1.ReasonBundleTooLarge || !strings.Contains(p.message, "remove API keys or webhooks")) {
			t.Errorf("bundleTooLarge(%d) = %+v", tc.n, p)
		}
	}
}

func TestSelectorProblem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sel     *metav1.LabelSelector
		problem bool
	}{
		{"none", nil, false},
		{"labels", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}, false},
		{"In with values", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold"}}}}, false},
		{"In without values", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}, true},
	} {
		p := selectorProblem(tc.sel)
		if (p != nil) != tc.problem || p != nil && p.reason != chatv1alpha1.ReasonInvalidAllowedNamespaces {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
}

func TestAssistantProblem(t *testing.T) {
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "rt"}, Spec: chatv1alpha1.ChatRuntimeSpec{
		Assistant: chatv1alpha1.AssistantSpec{Providers: []chatv1alpha1.ModelProviderSpec{
			{Name: "small", Models: []chatv1alpha1.ProviderModelSpec{{Name: "llama3.2:1b"}, {Name: "llama3.2:3b"}}}}}}}
	ownKey := &chatv1alpha1.SecretKeySelector{Name: "my-key"}
	for _, tc := range []struct {
		name string
		plan chatv1alpha1.PlanAssistantSpec
		key  *chatv1alpha1.SecretKeySelector
		want string // the reason, "" for none
	}{
		{"the runtime's default", chatv1alpha1.PlanAssistantSpec{}, nil, ""},
		{"a provider alone", chatv1alpha1.PlanAssistantSpec{Provider: "small"}, nil, ""},
		{"a provider's model", chatv1alpha1.PlanAssistantSpec{Provider: "small", Model: "llama3.2:3b"}, nil, ""},
		{"an unknown provider", chatv1alpha1.PlanAssistantSpec{Provider: "large"}, nil, chatv1alpha1.ReasonProviderNotFound},
		{"an unknown model", chatv1alpha1.PlanAssistantSpec{Provider: "small", Model: "gpt-5"}, nil, chatv1alpha1.ReasonModelNotFound},
		{"an own key the plan allows", chatv1alpha1.PlanAssistantSpec{Provider: "small", AllowOwnKey: true}, ownKey, ""},
		{"an own key the plan does not allow", chatv1alpha1.PlanAssistantSpec{Provider: "small"}, ownKey, chatv1alpha1.ReasonOwnKeyNotAllowed},
		{"an own key to the default", chatv1alpha1.PlanAssistantSpec{AllowOwnKey: true}, ownKey, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: chatv1alpha1.PlanSpec{Assistant: tc.plan}}
			m := &chatv1alpha1.Merchant{Spec: chatv1alpha1.MerchantSpec{Assistant: chatv1alpha1.MerchantAssistantSpec{APIKeySecretRef: tc.key}}}
			got := ""
			if pr := assistantProblem(p, rt, m); pr != nil {
				got = pr.reason
				if strings.Contains(pr.message, "my-key") {
					t.Errorf("the message names the key's Secret: %s", pr.message)
				}
			}
			if got != tc.want {
				t.Errorf("assistantProblem = %q, want %q", got, tc.want)
			}
		})
	}
}
