//go:build integration

package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// tenantFixture is a merchant with its own plan and runtime, so tests can change either freely.
type tenantFixture struct {
	ns       string
	plan     *chatv1alpha1.Plan
	runtime  *chatv1alpha1.ChatRuntime
	merchant *chatv1alpha1.Merchant
	id       string
}

func newTenant(t *testing.T, webhooks bool) *tenantFixture {
	t.Helper()
	ns := newNamespace(t)
	f := &tenantFixture{ns: ns, plan: plan("plan-"+ns, 10, webhooks), runtime: runtimeObj("rt-" + ns)}
	f.merchant = merchant(ns, "shop", f.plan.Name, f.runtime.Name)
	create(t, f.plan, f.runtime, f.merchant)
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	f.id = f.merchant.Status.MerchantID
	return f
}

func keySecretValue(t *testing.T, k *chatv1alpha1.APIKey) (string, *corev1.Secret) {
	t.Helper()
	var s corev1.Secret
	ref := k.KeySecretRef()
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: k.Namespace, Name: ref.Name}, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[ref.Key]), &s
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func hasKeyHash(hash string) func(*tenant.Bundle) error {
	return func(b *tenant.Bundle) error {
		for _, k := range b.APIKeys {
			if k.SHA256 == hash {
				return nil
			}
		}
		return fmt.Errorf("key hash not in bundle (%d keys)", len(b.APIKeys))
	}
}

func lacksKeyHash(hash string) func(*tenant.Bundle) error {
	return func(b *tenant.Bundle) error {
		if hasKeyHash(hash)(b) == nil {
			return errors.New("key hash still in bundle")
		}
		return nil
	}
}

func TestMissingPlanThenCreated(t *testing.T) {
	ns := newNamespace(t)
	rt := runtimeObj("rt-" + ns)
	m := merchant(ns, "early", "plan-"+ns, rt.Name)
	create(t, rt, m)
	waitReady(t, m, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotFound)
	if _, err := bundleSecret(t, ns+"-early"); !apierrors.IsNotFound(err) {
		t.Fatalf("a bundle exists without a plan: %v", err)
	}
	if slices.Contains(m.Finalizers, merchantFinalizer) {
		t.Errorf("a Merchant without a bundle has the finalizer: %v", m.Finalizers)
	}

	p := plan("plan-"+ns, 7, false)
	create(t, p)
	waitReady(t, m, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if !slices.Contains(m.Finalizers, merchantFinalizer) {
		t.Errorf("a published Merchant lacks the finalizer that retires its bundle: %v", m.Finalizers)
	}
	if m.Status.MerchantID != ns+"-early" || m.Status.Plan != p.Name {
		t.Errorf("status: merchantID %q plan %q", m.Status.MerchantID, m.Status.Plan)
	}
	b := waitBundle(t, m.Status.MerchantID, func(*tenant.Bundle) error { return nil })
	if b.Plan.RequestsPerSecond != 7 || b.DisplayName != "Shop early" || b.Source != ns+"/early" {
		t.Errorf("bundle: %+v", b)
	}
	// The schema's defaults of a plan's import bounds reach the runtime as they are.
	if b.Plan.ImportItems != tenant.DefaultImportItems || b.Plan.ImportBytes != tenant.DefaultImportBytes {
		t.Errorf("import bounds in the bundle: %d items, %d bytes", b.Plan.ImportItems, b.Plan.ImportBytes)
	}
	want := `<script src="https://chat.example.com/widget.js" data-api-key="<API_KEY>" data-merchant-id="` + m.Status.MerchantID + `" async></script>`
	if m.Status.EmbedSnippet != want {
		t.Errorf("embed snippet:\n got %s\nwant %s", m.Status.EmbedSnippet, want)
	}
	eventually(t, "plan counts its merchant", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		if p.Status.Merchants != 1 {
			return fmt.Errorf("merchants = %d", p.Status.Merchants)
		}
		return nil
	})
}

func TestMissingRuntime(t *testing.T) {
	ns := newNamespace(t)
	p := plan("plan-"+ns, 10, false)
	m := merchant(ns, "shop", p.Name, "nowhere")
	create(t, p, m)
	waitReady(t, m, metav1.ConditionFalse, chatv1alpha1.ReasonRuntimeNotFound)
	create(t, runtimeObj("nowhere"))
	waitReady(t, m, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
}

func TestPlanChangeReachesBundle(t *testing.T) {
	f := newTenant(t, false)
	// The model's bounds per conversation and visitor reach the bundle with the schema's defaults.
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if b.Plan.TurnsPerConversation != 50 || b.Plan.TokensPerConversation != 100_000 ||
			b.Plan.TurnsPerVisitorPerDay != 200 || b.Plan.TokensPerVisitorPerDay != 400_000 {
			return fmt.Errorf("the model's bounds in the bundle: %+v", b.Plan)
		}
		return nil
	})
	update(t, f.plan, func(p *chatv1alpha1.Plan) {
		p.Spec.RequestsPerSecond = 42
		p.Spec.Burst = new(int32(84))
		p.Spec.MonthlyConversations = 9000
		p.Spec.MonthlyTokens = 2_000_000
		p.Spec.ImportItems, p.Spec.ImportBytes = 50, 64<<10
		p.Spec.TurnsPerConversation, p.Spec.TokensPerConversation = 7, 7000
		p.Spec.TurnsPerVisitorPerDay, p.Spec.TokensPerVisitorPerDay = 30, 30_000
	})
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if b.Plan.RequestsPerSecond != 42 || b.Plan.Burst != 84 || b.Plan.MonthlyConversations != 9000 ||
			b.Plan.MonthlyTokens != 2_000_000 || b.Plan.ImportItems != 50 || b.Plan.ImportBytes != 64<<10 ||
			b.Plan.TurnsPerConversation != 7 || b.Plan.TokensPerConversation != 7000 ||
			b.Plan.TurnsPerVisitorPerDay != 30 || b.Plan.TokensPerVisitorPerDay != 30_000 {
			return fmt.Errorf("plan in bundle: %+v", b.Plan)
		}
		return nil
	})

	// Moving the merchant to another plan is picked up too, and both plans count right.
	other := plan("other-"+f.ns, 3, false)
	create(t, other)
	update(t, f.merchant, func(m *chatv1alpha1.Merchant) { m.Spec.PlanRef.Name = other.Name })
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if b.Plan.Name != other.Name || b.Plan.RequestsPerSecond != 3 {
			return fmt.Errorf("plan in bundle: %+v", b.Plan)
		}
		return nil
	})
	eventually(t, "old plan no longer counts the merchant", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(f.plan), f.plan); err != nil {
			return err
		}
		if f.plan.Status.Merchants != 0 {
			return fmt.Errorf("merchants = %d", f.plan.Status.Merchants)
		}
		return nil
	})

	// A plan nobody is on shows 0, not nothing, in `kubectl get plans`. Read it raw: a missing field would
	// decode as 0 too.
	unused := plan("unused-"+f.ns, 1, false)
	create(t, unused)
	waitReady(t, unused, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	var raw unstructured.Unstructured
	raw.SetGroupVersionKind(chatv1alpha1.GroupVersion.WithKind("Plan"))
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(unused), &raw); err != nil {
		t.Fatal(err)
	}
	if n, found, _ := unstructured.NestedInt64(raw.Object, "status", "merchants"); !found || n != 0 {
		t.Errorf("status.merchants = %d (present: %v)", n, found)
	}
}

func TestGeneratedKey(t *testing.T) {
	f := newTenant(t, false)
	pk := apiKey(f.ns, "widget", "shop", chatv1alpha1.APIKeyPublishable)
	sk := apiKey(f.ns, "server", "shop", chatv1alpha1.APIKeySecret)
	sk.Spec.SecretName = "crm-credentials"
	create(t, pk, sk)
	waitReady(t, pk, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, sk, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)

	pkValue, pkSecret := keySecretValue(t, pk)
	skValue, skSecret := keySecretValue(t, sk)
	if skSecret.Name != "crm-credentials" {
		t.Errorf("secret key written to %s", skSecret.Name)
	}
	for _, c := range []struct {
		key    string
		prefix string
		obj    *chatv1alpha1.APIKey
		secret *corev1.Secret
	}{{pkValue, "pk_", pk, pkSecret}, {skValue, "sk_", sk, skSecret}} {
		if !strings.HasPrefix(c.key, c.prefix) || len(c.key) < 50 {
			t.Errorf("key %s... does not look generated", c.obj.Status.Prefix)
		}
		if !strings.HasPrefix(c.key, c.obj.Status.Prefix+"_") || c.obj.Status.KeyID == "" {
			t.Errorf("status prefix %q / key ID %q do not identify the key", c.obj.Status.Prefix, c.obj.Status.KeyID)
		}
		if !metav1.IsControlledBy(c.secret, c.obj) {
			t.Errorf("Secret %s is not owned by its APIKey (garbage collection would not remove it)", c.secret.Name)
		}
		if c.secret.Immutable == nil || !*c.secret.Immutable {
			t.Errorf("Secret %s is not immutable", c.secret.Name)
		}
	}
	b := waitBundle(t, f.id, hasKeyHash(sha256Hex(pkValue)))
	waitBundle(t, f.id, hasKeyHash(sha256Hex(skValue)))
	// Neither a merchant's first Ready nor its keys' creation is an Event (their status and the Merchant's tell):
	// an Event is a write to the API server, for each of thousands of merchants.
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	for _, e := range eventsOn(t, f.ns, "Merchant", f.merchant.Name) {
		t.Errorf("a merchant's first Ready raised an event: %s %s: %s", e.Type, e.Reason, e.Note)
	}
	for _, k := range []*chatv1alpha1.APIKey{pk, sk} {
		for _, e := range eventsOn(t, f.ns, "APIKey", k.Name) {
			t.Errorf("a freshly generated key raised an event: %s %s: %s", e.Type, e.Reason, e.Note)
		}
	}
	for _, k := range b.APIKeys {
		if k.SHA256 == sha256Hex(pkValue) && (k.Type != tenant.KeyPublishable || k.ID != pk.Status.KeyID) {
			t.Errorf("publishable key in bundle: %+v", k)
		}
	}

	// More reconciles (a spec change) and an operator restart leave the key as it was.
	update(t, pk, func(k *chatv1alpha1.APIKey) { k.Spec.Description = "touched" })
	waitReady(t, pk, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if err := shutdownOperator(); err != nil {
		t.Fatalf("stopping the operator: %v", err)
	}
	if err := startOperator(); err != nil {
		t.Fatalf("restarting the operator: %v", err)
	}
	update(t, pk, func(k *chatv1alpha1.APIKey) { k.Spec.Description = "touched again" })
	waitReady(t, pk, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	again, secretAgain := keySecretValue(t, pk)
	if again != pkValue || secretAgain.ResourceVersion != pkSecret.ResourceVersion {
		t.Errorf("the key Secret was rewritten (resourceVersion %s -> %s)", pkSecret.ResourceVersion, secretAgain.ResourceVersion)
	}
	waitBundle(t, f.id, hasKeyHash(sha256Hex(pkValue)))

	assertNoPlaintext(t, pkValue, skValue)

	// Deleting a key revokes it.
	if err := k8s.Delete(ctxT(t), sk); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, f.id, lacksKeyHash(sha256Hex(skValue)))
	waitBundle(t, f.id, hasKeyHash(sha256Hex(pkValue)))

	// A deleted key Secret is generated anew: the old key is revoked, and the new one is announced.
	if err := k8s.Delete(ctxT(t), secretAgain); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, f.id, lacksKeyHash(sha256Hex(pkValue)))
	eventually(t, "the replaced key is announced", func() error {
		if events := eventsOn(t, f.ns, "APIKey", pk.Name); !slices.ContainsFunc(events, func(e eventsv1.Event) bool {
			return e.Type == corev1.EventTypeNormal && e.Reason == chatv1alpha1.EventReasonKeyGenerated
		}) {
			return fmt.Errorf("events on the APIKey: %v", events)
		}
		return nil
	})
}

// eventsOn lists the events about the object of a kind and name in namespace.
func eventsOn(t *testing.T, namespace, kind, name string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := k8s.List(ctxT(t), &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var events []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			events = append(events, e)
		}
	}
	return events
}

// assertNoPlaintext checks that no secret value appears in any Parley status or any event, nor (for API keys,
// whose plaintext only the merchant's Secret may hold) in any bundle.
func assertNoPlaintext(t *testing.T, apiKeys ...string) {
	t.Helper()
	assertNotExposed(t, true, apiKeys...)
}

// assertNotExposed checks statuses and events, and bundles too when inBundles is set. Webhook signing secrets
// are in bundles by design: the runtime signs with them.
func assertNotExposed(t *testing.T, inBundles bool, secrets ...string) {
	t.Helper()
	var dump strings.Builder
	lists := []client.ObjectList{
		&chatv1alpha1.PlanList{}, &chatv1alpha1.ChatRuntimeList{}, &chatv1alpha1.MerchantList{},
		&chatv1alpha1.APIKeyList{}, &chatv1alpha1.WebhookList{}, &eventsv1.EventList{}, &corev1.EventList{},
	}
	for _, l := range lists {
		if err := k8s.List(ctxT(t), l); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(l)
		dump.Write(data)
	}
	if inBundles {
		var bundles corev1.SecretList
		if err := k8s.List(ctxT(t), &bundles, client.InNamespace(operatorNS), client.MatchingLabels{chatv1alpha1.TenantLabel: "true"}); err != nil {
			t.Fatal(err)
		}
		for _, b := range bundles.Items {
			dump.Write(b.Data[tenant.DataKey])
		}
	}
	var events eventsv1.EventList
	_ = k8s.List(ctxT(t), &events)
	if len(events.Items) == 0 {
		t.Error("no events were recorded at all; the check would prove nothing")
	}
	for _, s := range secrets {
		if strings.Contains(dump.String(), s) {
			t.Errorf("a plaintext secret (%s...) appears where it must not", s[:6])
		}
	}
}

func TestBringYourOwnKey(t *testing.T) {
	f := newTenant(t, false)
	own := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "vault-key", Namespace: f.ns},
		Data:       map[string][]byte{"token": []byte("byo-key-from-vault-0123456789abcdefghij")},
	}
	create(t, own)
	k := apiKey(f.ns, "byo", "shop", chatv1alpha1.APIKeySecret)
	k.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "vault-key", Key: "token"}
	create(t, k)
	waitReady(t, k, metav1.ConditionFalse, chatv1alpha1.ReasonSecretNotLabelled)

	update(t, own, func(s *corev1.Secret) {
		s.Labels = map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}
	})
	waitReady(t, k, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if k.Status.Prefix != "" {
		t.Errorf("a foreign key must show no prefix, got %q", k.Status.Prefix)
	}
	first := "byo-key-from-vault-0123456789abcdefghij"
	waitBundle(t, f.id, hasKeyHash(sha256Hex(first)))

	// Rotating the value in the Secret replaces the hash.
	second := "rotated-key-from-vault-9876543210zyxwvu"
	update(t, own, func(s *corev1.Secret) { s.Data["token"] = []byte(second) })
	waitBundle(t, f.id, hasKeyHash(sha256Hex(second)))
	waitBundle(t, f.id, lacksKeyHash(sha256Hex(first)))

	// A value too short to be a key is refused, and the key leaves the bundle.
	update(t, own, func(s *corev1.Secret) { s.Data["token"] = []byte("short") })
	waitReady(t, k, metav1.ConditionFalse, chatv1alpha1.ReasonInvalidSecret)
	waitBundle(t, f.id, lacksKeyHash(sha256Hex(second)))
	assertNoPlaintext(t, first, second)

	// The operator never writes into a bring-your-own Secret.
	var got corev1.Secret
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(own), &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Data["token"]) != "short" || len(got.OwnerReferences) != 0 {
		t.Errorf("the operator changed a bring-your-own Secret")
	}
}

func TestMissingBringYourOwnSecret(t *testing.T) {
	f := newTenant(t, false)
	k := apiKey(f.ns, "byo", "shop", chatv1alpha1.APIKeySecret)
	k.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "not-there"}
	create(t, k)
	waitReady(t, k, metav1.ConditionFalse, chatv1alpha1.ReasonSecretNotFound)
}

func TestSecretNameConflict(t *testing.T) {
	f := newTenant(t, false)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: f.ns},
		Data:       map[string][]byte{"apiKey": []byte("someone else's data")},
	})
	k := apiKey(f.ns, "clash", "shop", chatv1alpha1.APIKeyPublishable)
	k.Spec.SecretName = "taken"
	create(t, k)
	waitReady(t, k, metav1.ConditionFalse, chatv1alpha1.ReasonSecretConflict)
}

func TestExpiredKeyLeavesBundle(t *testing.T) {
	f := newTenant(t, false)
	k := apiKey(f.ns, "short-lived", "shop", chatv1alpha1.APIKeyPublishable)
	k.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(4 * time.Second)}
	create(t, k)
	waitReady(t, k, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	value, _ := keySecretValue(t, k)
	b := waitBundle(t, f.id, hasKeyHash(sha256Hex(value)))
	if b.APIKeys[0].ExpiresAt == nil {
		t.Error("the bundle does not carry the expiry")
	}
	// Nothing else changes: only the requeue at expiry time can remove it.
	waitBundle(t, f.id, lacksKeyHash(sha256Hex(value)))
	waitReady(t, k, metav1.ConditionFalse, chatv1alpha1.ReasonExpired)
}

func TestKeyOfMissingMerchant(t *testing.T) {
	ns := newNamespace(t)
	k := apiKey(ns, "orphan", "ghost", chatv1alpha1.APIKeyPublishable)
	create(t, k)
	waitReady(t, k, metav1.ConditionFalse, chatv1alpha1.ReasonMerchantNotFound)
}

func TestWebhooksFollowThePlan(t *testing.T) {
	starter := newTenant(t, false)
	enterprise := newTenant(t, true)
	for _, f := range []*tenantFixture{starter, enterprise} {
		create(t, webhook(f.ns, "crm", "shop"))
	}
	starterHook := &chatv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Namespace: starter.ns, Name: "crm"}}
	enterpriseHook := &chatv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Namespace: enterprise.ns, Name: "crm"}}
	waitReady(t, starterHook, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks)
	waitReady(t, enterpriseHook, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)

	var signing corev1.Secret
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: enterprise.ns, Name: "crm-signing-secret"}, &signing); err != nil {
		t.Fatal(err)
	}
	secret := string(signing.Data[chatv1alpha1.DefaultSigningSecretKey])
	if !strings.HasPrefix(secret, "whsec_") || !metav1.IsControlledBy(&signing, enterpriseHook) {
		t.Errorf("signing secret is not a generated, owned whsec_ secret")
	}
	waitBundle(t, enterprise.id, func(b *tenant.Bundle) error {
		if len(b.Webhooks) != 1 || b.Webhooks[0].URL != "https://crm.example/hooks" || b.Webhooks[0].SigningSecrets[0] != secret {
			return fmt.Errorf("webhooks in bundle: %d", len(b.Webhooks))
		}
		return nil
	})
	waitBundle(t, starter.id, func(b *tenant.Bundle) error {
		if len(b.Webhooks) != 0 {
			return errors.New("a starter merchant has webhooks in its bundle")
		}
		return nil
	})
	assertNotExposed(t, false, secret)

	// Moving the enterprise merchant to a plan without webhooks takes them out, and the webhook says why.
	update(t, enterprise.plan, func(p *chatv1alpha1.Plan) { p.Spec.Features.Webhooks = false })
	waitBundle(t, enterprise.id, func(b *tenant.Bundle) error {
		if len(b.Webhooks) != 0 {
			return errors.New("webhooks remain after the plan lost them")
		}
		return nil
	})
	waitReady(t, enterpriseHook, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks)
}

func TestWebhookSigningSecretRotationAndDeletion(t *testing.T) {
	f := newTenant(t, true)
	current := "whsec_" + strings.Repeat("Q", 43) + "="
	previous := "whsec_" + strings.Repeat("P", 43) + "="
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "crm-signing", Namespace: f.ns,
			Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelSigningSecret}},
		Data: map[string][]byte{"signingSecret": []byte(current), "previousSigningSecret": []byte(previous)},
	})
	w := webhook(f.ns, "crm", "shop")
	w.Spec.SigningSecretRef = &chatv1alpha1.SecretKeySelector{Name: "crm-signing"}
	disabled := webhook(f.ns, "paused", "shop")
	disabled.Spec.Disabled = true
	create(t, w, disabled)
	waitReady(t, w, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, disabled, metav1.ConditionTrue, chatv1alpha1.ReasonDisabled)
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if len(b.Webhooks) != 1 || b.Webhooks[0].ID != "crm" {
			return fmt.Errorf("want only the enabled webhook, got %d", len(b.Webhooks))
		}
		if s := b.Webhooks[0].SigningSecrets; len(s) != 2 || s[0] != current || s[1] != previous {
			return errors.New("both signing secrets must be in the bundle during rotation, current first")
		}
		return nil
	})
	if err := k8s.Delete(ctxT(t), w); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if len(b.Webhooks) != 0 {
			return errors.New("a deleted webhook remains in the bundle")
		}
		return nil
	})
	assertNotExposed(t, false, current, previous)
}

func TestDeletingMerchantRetiresBundle(t *testing.T) {
	f := newTenant(t, false)
	waitBundle(t, f.id, func(*tenant.Bundle) error { return nil })
	deleteMerchant(t, f)
}

// TestRecreatedMerchantBundleCarriesItsUID: the bundle names the Merchant's UID, and a Merchant deleted and created
// again under the same namespace and name takes its retired bundle back with its own, new UID, by which the
// runtime tells it from its predecessor and erases the predecessor's data (test/e2e TestRecreatedMerchantStartsEmpty).
func TestRecreatedMerchantBundleCarriesItsUID(t *testing.T) {
	f := newTenant(t, false)
	first := f.merchant.UID
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if b.UID != string(first) {
			return fmt.Errorf("the bundle carries UID %q, want %s", b.UID, first)
		}
		return nil
	})
	deleteMerchant(t, f)
	again := merchant(f.ns, "shop", f.plan.Name, f.runtime.Name)
	create(t, again)
	waitReady(t, again, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if again.UID == first || again.Status.MerchantID != f.id {
		t.Fatalf("the new Merchant has UID %s (the old one's %s) and ID %q (want %q)", again.UID, first, again.Status.MerchantID, f.id)
	}
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if b.UID != string(again.UID) {
			return fmt.Errorf("the bundle carries UID %q, want the new Merchant's %s", b.UID, again.UID)
		}
		return nil
	})
}

func TestBundleIsRestoredWhenDeleted(t *testing.T) {
	f := newTenant(t, false)
	s, err := bundleSecret(t, f.id)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctxT(t), s); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, f.id, func(*tenant.Bundle) error { return nil })
}

// TestMerchantIDCannotBeTakenOver checks tenant isolation: a Merchant in another namespace that claims an ID in
// use gets a conflict and never touches the first merchant's bundle.
func TestMerchantIDCannotBeTakenOver(t *testing.T) {
	victim := newTenant(t, true)
	create(t, apiKey(victim.ns, "widget", "shop", chatv1alpha1.APIKeyPublishable))
	before := waitBundle(t, victim.id, func(b *tenant.Bundle) error {
		if len(b.APIKeys) != 1 {
			return errors.New("waiting for the key")
		}
		return nil
	})

	attackerNS := newNamespace(t)
	attacker := merchant(attackerNS, "evil", victim.plan.Name, victim.runtime.Name)
	attacker.Spec.MerchantID = victim.id
	create(t, attacker, apiKey(attackerNS, "evil-key", "evil", chatv1alpha1.APIKeySecret))
	waitReady(t, attacker, metav1.ConditionFalse, chatv1alpha1.ReasonMerchantIDConflict)
	if attacker.Status.MerchantID != "" {
		t.Errorf("the attacker's status claims merchant ID %q", attacker.Status.MerchantID)
	}
	after := waitBundle(t, victim.id, func(*tenant.Bundle) error { return nil })
	if after.Source != victim.ns+"/shop" || len(after.APIKeys) != 1 || after.APIKeys[0].SHA256 != before.APIKeys[0].SHA256 {
		t.Errorf("the victim's bundle changed: %+v", after)
	}

	// Deleting the attacker does not delete the victim's bundle.
	if err := k8s.Delete(ctxT(t), attacker); err != nil {
		t.Fatal(err)
	}
	eventually(t, "attacker gone", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(attacker), attacker); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})
	if _, err := bundleSecret(t, victim.id); err != nil {
		t.Errorf("the victim's bundle is gone: %v", err)
	}
}

func TestSuspendedMerchant(t *testing.T) {
	f := newTenant(t, false)
	update(t, f.merchant, func(m *chatv1alpha1.Merchant) { m.Spec.Suspended = true })
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonSuspended)
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if !b.Suspended {
			return errors.New("not suspended in the bundle")
		}
		return nil
	})
}

// deleteMerchant deletes the fixture's Merchant and waits until its bundle is retired (emptied, labelled retired,
// still naming its runtime) and the Merchant is gone.
func deleteMerchant(t *testing.T, f *tenantFixture) {
	t.Helper()
	if err := k8s.Delete(ctxT(t), f.merchant); err != nil {
		t.Fatal(err)
	}
	eventually(t, "bundle retired", func() error {
		s, err := bundleSecret(t, f.id)
		if err != nil {
			return err
		}
		if _, retired := s.Annotations[render.RetiredAnnotation]; !retired || len(s.Data) != 0 ||
			s.Labels[chatv1alpha1.TenantLabel] != contract.TenantRetired || s.Labels[chatv1alpha1.RuntimeLabel] != f.runtime.Name {
			return fmt.Errorf("bundle still served: labels %v annotations %v", s.Labels, s.Annotations)
		}
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(f.merchant), f.merchant); !apierrors.IsNotFound(err) {
			return fmt.Errorf("merchant still there: %w", err)
		}
		return nil
	})
}
