package controllers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// newMerchantDelay is how long a new Merchant waits, after the last of it and its APIKeys and Webhooks arrived in
// the cache, before it first publishes its bundle: a Merchant is usually created together with its keys and
// webhooks (one apply of a tenant's manifests), and published at once it would publish a bundle without those
// not yet in the cache, and then again with each.
const newMerchantDelay = time.Second

// reconciledBefore says whether a Merchant has been reconciled before: it has a Ready condition.
func reconciledBefore(m *chatv1alpha1.Merchant) bool {
	return meta.FindStatusCondition(m.Status.Conditions, chatv1alpha1.ConditionReady) != nil
}

// firstPublishWait is how long a Merchant waits at now before it publishes: a Merchant never reconciled before
// until newMerchantDelay after lastArrival, the last arrival of it or one of its APIKeys or Webhooks (arrivals).
func firstPublishWait(m *chatv1alpha1.Merchant, lastArrival, now time.Time) time.Duration {
	if reconciledBefore(m) {
		return 0
	}
	return lastArrival.Add(newMerchantDelay).Sub(now)
}

// merchantFinalizer removes the tenant bundle, which lives in the runtime's namespace and so cannot be owned by
// the Merchant.
const merchantFinalizer = "chat.parley.dev/tenant-bundle"

// MerchantReconciler renders each Merchant, its Plan, its usable keys and (on plans with webhooks) its webhooks
// into the tenant bundle the runtime serves it from.
type MerchantReconciler struct {
	client.Client
	// APIReader reads a bundle straight from the API server when creating it finds one the cache does not hold.
	APIReader client.Reader
	Secrets   secretReader
	Recorder  recorder.EventRecorder
	Metrics   *merchantMetrics
	Now       func() time.Time
	// writes holds back a reconcile while the cache is older than the reconciler's own last write.
	writes *ownWrites
	// arrivals holds back a new Merchant's first publish while its keys and webhooks are arriving.
	arrivals *arrivals
	// bundles remembers the bundles the reconciler created until its cache has them.
	bundles *ownSecrets
	// Namespace is where ChatRuntimes live: the operator's namespace. Bundles live in each runtime's target
	// namespace.
	Namespace string
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=merchants,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=merchants/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=merchants/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Reconcile loads a Merchant, decides its bundle, applies it and reports.
func (r *MerchantReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var m chatv1alpha1.Merchant
	if err := r.Get(ctx, req.NamespacedName, &m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.writes.heldBack(&m) {
		return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
	}
	if !m.DeletionTimestamp.IsZero() {
		return retryConflict(r.finalize(ctx, &m))
	}
	if wait := r.arrivals.wait(&m); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	before := m.DeepCopy()
	id := render.MerchantID(&m)
	ns, err := r.namespace(ctx, m.Namespace)
	if apierrors.IsNotFound(err) {
		// The namespace's event has not reached the cache yet (a Merchant is often created a moment after its
		// namespace); it brings the Merchant back (merchantsOfNamespace).
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}

	out, err := r.publish(ctx, &m, id, ns)
	// publish may have added the finalizer: the status patch below carries only the status.
	before.ObjectMeta = *m.ObjectMeta.DeepCopy()
	if errors.Is(err, errPending) || errors.Is(err, errCacheBehind) {
		return ctrl.Result{}, nil
	}
	p, err := asProblem(err)
	if err == nil && p != nil && p.reason != chatv1alpha1.ReasonMerchantIDConflict {
		p, err = r.withdrawRevoked(ctx, &m, id, p, suspended(&m, ns.Labels))
	}
	if err != nil {
		return retryConflict(err)
	}
	if p == nil || p.reason != chatv1alpha1.ReasonMerchantIDConflict {
		m.Status.MerchantID = id
	}
	m.Status.Plan = m.Spec.PlanRef.Name
	m.Status.ObservedGeneration = m.Generation
	cond := readyFrom(m.Generation, p, "the tenant bundle is published")
	switch {
	case p == nil && suspended(&m, ns.Labels):
		cond = ready(m.Generation, metav1.ConditionTrue, chatv1alpha1.ReasonSuspended,
			"the tenant bundle is published; chat is refused while the merchant is suspended")
	case p == nil && len(out.ownersLeftOut) > 0:
		cond = ready(m.Generation, metav1.ConditionTrue, chatv1alpha1.ReasonOwnersNotAllowed,
			fmt.Sprintf("the tenant bundle is published without the owners outside the email domains and subjects "+
				"granted to namespace %s: %s", m.Namespace, strings.Join(out.ownersLeftOut, ", ")))
	}
	news := putReady(&m.Status.Conditions, cond, quietFirstReady)
	r.arrivals.forget(req.NamespacedName) // it has a Ready condition from now on
	r.Metrics.set(m.Namespace, m.Name, m.Spec.PlanRef.Name, cond.Status == metav1.ConditionTrue)
	statusOf := func(m *chatv1alpha1.Merchant) any { return m.Status }
	return reportStatus(ctx, r.Client, r.writes, r.Recorder, before, &m, statusOf, news, ctrl.Result{RequeueAfter: out.requeue})
}

// published is what publishing a bundle tells the Ready condition and the next reconcile.
type published struct {
	// requeue is how long until a key expires, when the bundle must change again.
	requeue time.Duration
	// ownersLeftOut are the owners outside the email domains and subjects granted to the namespace.
	ownersLeftOut []string
}

// publish resolves everything the bundle needs and writes it. It fills the status counts and snippet. ns is the
// Merchant's namespace, whose labels the platform team's grants select.
func (r *MerchantReconciler) publish(ctx context.Context, m *chatv1alpha1.Merchant, id string, ns *metav1.PartialObjectMetadata) (published, error) {
	nsLabels := ns.Labels
	var plan chatv1alpha1.Plan
	if err := getReferenced(ctx, r.Client, types.NamespacedName{Name: m.Spec.PlanRef.Name}, &plan,
		chatv1alpha1.ReasonPlanNotFound, "Plan %s does not exist", m.Spec.PlanRef.Name); err != nil {
		return published{}, err
	}
	if !granted(plan.Spec.AllowedNamespaces, nsLabels) {
		return published{}, newProblem(chatv1alpha1.ReasonPlanNotAllowed,
			"Plan %s is not granted to namespace %s; ask the platform team", plan.Name, m.Namespace)
	}
	var rt chatv1alpha1.ChatRuntime
	rtKey := types.NamespacedName{Namespace: r.Namespace, Name: m.Spec.RuntimeRef.Name}
	if err := getReferenced(ctx, r.Client, rtKey, &rt,
		chatv1alpha1.ReasonRuntimeNotFound, "ChatRuntime %s does not exist", rtKey); err != nil {
		return published{}, err
	}
	if !granted(rt.Spec.AllowedNamespaces, nsLabels) {
		return published{}, newProblem(chatv1alpha1.ReasonRuntimeNotAllowed,
			"ChatRuntime %s is not granted to namespace %s; ask the platform team", rt.Name, m.Namespace)
	}
	var runtimes chatv1alpha1.ChatRuntimeList
	if err := r.List(ctx, &runtimes, client.InNamespace(r.Namespace)); err != nil {
		return published{}, fmt.Errorf("listing ChatRuntimes: %w", err)
	}
	if targetTaken(&rt, runtimes.Items, r.Namespace) {
		return published{}, newProblem(chatv1alpha1.ReasonTargetNamespaceInUse,
			"ChatRuntime %s shares its target namespace with another runtime, which could read the bundle; ask the platform team", rt.Name)
	}
	if p := assistantProblem(&plan, &rt, m); p != nil {
		return published{}, p
	}
	if err := merchantPastLimit(ctx, r.Client, m, rt.Spec.TenantLimits); err != nil {
		return published{}, err
	}
	ownKey, err := r.ownKey(ctx, m)
	if err != nil {
		return published{}, err
	}
	keys, keysPending, err := r.usableKeys(ctx, m, rt.Spec.TenantLimits)
	if err != nil {
		return published{}, err
	}
	var hooks []render.ResolvedWebhook
	var hooksPending bool
	if plan.Spec.Features.Webhooks {
		if hooks, hooksPending, err = r.usableWebhooks(ctx, m); err != nil {
			return published{}, err
		}
	}
	if keysPending || hooksPending {
		return published{}, errPending
	}
	var sources chatv1alpha1.KnowledgeSourceList
	if err := r.List(ctx, &sources, client.InNamespace(m.Namespace), client.MatchingFields{sourceMerchantIndex: m.Name}); err != nil {
		return published{}, fmt.Errorf("listing knowledge sources: %w", err)
	}
	now := r.Now()
	bundle := render.Bundle(m, id, &plan, keys, hooks, now)
	bundle.Sources = render.Sources(sources.Items)
	bundle.Suspended = suspended(m, nsLabels)
	bundle.Assistant.APIKey = ownKey
	var out published
	bundle.Owners, out.ownersLeftOut = grantedOwners(bundle.Owners, ns.Annotations)
	doc, err := tenant.Marshal(bundle)
	if err != nil {
		return published{}, newProblem(chatv1alpha1.ReasonInvalidBundle, "the tenant bundle is invalid: %s", err)
	}
	if p := bundleTooLarge(len(doc)); p != nil {
		return published{}, p
	}
	bundles, err := merchantBundles(ctx, r.Client, r.Namespace, id)
	if err != nil {
		return published{}, err
	}
	if taken, retired := idTaken(bundles, render.Source(m)); taken {
		// Of two Merchants of different runtimes that published one ID at once, the later withdraws its bundle.
		if err := r.retireOwn(ctx, m, bundles, ""); err != nil {
			return published{}, err
		}
		return published{}, idConflict(id, retired)
	}
	if err := r.addFinalizer(ctx, m); err != nil {
		return published{}, err
	}
	want := render.BundleSecret(&rt, id, render.Source(m), doc)
	if err := r.applyBundle(ctx, want); err != nil {
		return published{}, err
	}
	// A Merchant moved to a runtime with another target namespace leaves its old runtime, which erases its data
	// there once deletedMerchantRetention has passed.
	if err := r.retireOwn(ctx, m, bundles, want.Namespace); err != nil {
		return published{}, err
	}
	m.Status.APIKeys = count(len(bundle.APIKeys))
	m.Status.Webhooks = count(len(bundle.Webhooks))
	m.Status.BundleSecret = want.Namespace + "/" + want.Name
	m.Status.EmbedSnippet = render.EmbedSnippet(&rt, id)
	out.requeue = render.NextExpiry(keys, now)
	return out, nil
}

// assistantProblem decides whether the runtime serves the model the merchant's plan names, and whether the
// merchant may send its own key to it.
func assistantProblem(plan *chatv1alpha1.Plan, rt *chatv1alpha1.ChatRuntime, m *chatv1alpha1.Merchant) *problem {
	a := plan.Spec.Assistant
	if m.Spec.Assistant.APIKeySecretRef != nil && !a.AllowOwnKey {
		return newProblem(chatv1alpha1.ReasonOwnKeyNotAllowed,
			"Plan %s does not let its merchants send their own model provider key (spec.assistant.allowOwnKey); "+
				"remove spec.assistant.apiKeySecretRef or ask the platform team", plan.Name)
	}
	if a.Provider == "" {
		return nil
	}
	i := slices.IndexFunc(rt.Spec.Assistant.Providers, func(p chatv1alpha1.ModelProviderSpec) bool { return p.Name == a.Provider })
	if i < 0 {
		return newProblem(chatv1alpha1.ReasonProviderNotFound,
			"Plan %s names the model provider %q, which ChatRuntime %s does not declare (spec.assistant.providers); ask the platform team",
			plan.Name, a.Provider, rt.Name)
	}
	models := rt.Spec.Assistant.Providers[i].Models
	if a.Model != "" && !slices.ContainsFunc(models, func(m chatv1alpha1.ProviderModelSpec) bool { return m.Name == a.Model }) {
		return newProblem(chatv1alpha1.ReasonModelNotFound,
			"Plan %s names the model %q, which provider %s of ChatRuntime %s does not list; ask the platform team",
			plan.Name, a.Model, a.Provider, rt.Name)
	}
	return nil
}

// ownKey reads the merchant's own model provider key from its Secret, in the Merchant's namespace only; "" when
// it names none.
func (r *MerchantReconciler) ownKey(ctx context.Context, m *chatv1alpha1.Merchant) (string, error) {
	ref := m.Spec.Assistant.APIKeySecretRef
	if ref == nil {
		return "", nil
	}
	sel := chatv1alpha1.SecretKeySelector{Name: ref.Name, Key: ref.KeyOr(chatv1alpha1.DefaultAPIKeySecretKey)}
	key, _, err := r.Secrets.value(ctx, m.Namespace, sel, chatv1alpha1.SecretLabelProviderKey)
	return key, err
}

// withdrawRevoked keeps revocation in effect while the merchant's bundle cannot be rendered (p says why): the
// last published bundle stays, without the keys that are no longer usable (deleted, expired, refused), and with
// chat stopped when the platform's grant no longer covers it or the merchant is suspended now. The problem
// returned says so as well.
func (r *MerchantReconciler) withdrawRevoked(ctx context.Context, m *chatv1alpha1.Merchant, id string, p *problem, suspend bool) (*problem, error) {
	bundles, err := merchantBundles(ctx, r.Client, r.Namespace, id)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(bundles, func(b corev1.Secret) bool { return ownLive(&b, m) })
	if i < 0 {
		return p, nil
	}
	s := &bundles[i]
	key := client.ObjectKeyFromObject(s)
	published, err := tenant.Parse(s.Data[tenant.DataKey])
	if err != nil {
		return nil, fmt.Errorf("reading tenant bundle %s: %w", key.Name, err)
	}
	limits, err := tenantLimits(ctx, r.Client, r.Namespace, m)
	if err != nil {
		return nil, err
	}
	usable, _, err := r.usableKeys(ctx, m, limits)
	if err != nil {
		return nil, err
	}
	withdrawn := newProblem(p.reason, "%s; keys no longer usable are withdrawn from the last published bundle, "+
		"which otherwise stays in effect", p.message)
	stop := suspend || p.reason == chatv1alpha1.ReasonPlanNotAllowed || p.reason == chatv1alpha1.ReasonRuntimeNotAllowed ||
		p.reason == chatv1alpha1.ReasonTargetNamespaceInUse
	if stop {
		withdrawn = newProblem(p.reason, "%s; chat is stopped in the last published bundle", p.message)
	}
	kept, changed := withoutRevokedKeys(published.APIKeys, usable)
	// A plan that no longer allows the merchant's own provider key takes it back: the platform's key answers.
	dropOwnKey := p.reason == chatv1alpha1.ReasonOwnKeyNotAllowed && published.Assistant.APIKey != ""
	if !changed && !dropOwnKey && (!stop || published.Suspended) {
		return withdrawn, nil
	}
	if dropOwnKey {
		published.Assistant.APIKey = ""
	}
	published.APIKeys = kept
	published.Suspended = published.Suspended || stop
	doc, err := tenant.Marshal(published)
	if err != nil {
		return nil, fmt.Errorf("withdrawing keys from tenant bundle %s: %w", key.Name, err)
	}
	withdraw(s, hashesOf(kept))
	s.Data = map[string][]byte{tenant.DataKey: doc}
	if err := r.Update(ctx, s); err != nil {
		return nil, fmt.Errorf("withdrawing keys from tenant bundle %s: %w", key.Name, err)
	}
	return withdrawn, nil
}

// maxBundleBytes is the largest tenant bundle document published. Every runtime replica holds every bundle of
// its merchants in memory, so a tenant must not make one as large as a Secret holds (1 MiB); a Merchant at every
// limit of its schema, with its runtime's default apiKeysPerMerchant and a few dozen webhooks, takes well under
// it (TestLargestMerchantFitsItsBundle). Past it the write is refused with a condition saying so, rather than
// failing on the API server, which would leave the last bundle published, with keys since deleted and without a
// suspension since made, while nothing said why.
const maxBundleBytes = 256 << 10

// bundleTooLarge reports a bundle document of n bytes past maxBundleBytes as a problem, so that revocation and
// suspension are applied to the last published bundle (withdrawRevoked) and the condition says what to remove.
func bundleTooLarge(n int) *problem {
	if n <= maxBundleBytes {
		return nil
	}
	return newProblem(chatv1alpha1.ReasonBundleTooLarge,
		"the tenant bundle would take %d KiB, more than the %d KiB it may: remove API keys or webhooks", (n+1023)>>10, maxBundleBytes>>10)
}

// namespace returns the metadata of a namespace, read from the metadata-only cache: its labels carry the
// platform team's grants and suspension, its annotations the owner email domains.
func (r *MerchantReconciler) namespace(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return ns, nil
}

// grantedOwners decides which owners a merchant may name, given its namespace's annotations: every owner when the
// platform granted neither email domains nor subjects; otherwise owners whose email domain is one granted (exactly,
// ignoring case in ASCII only) and subject owners whose subject is one granted (exactly). It returns the owners
// kept and those left out, as they are shown in the Ready condition.
func grantedOwners(owners []tenant.Owner, nsAnnotations map[string]string) (kept []tenant.Owner, leftOut []string) {
	domainGrant, hasDomains := nsAnnotations[chatv1alpha1.OwnerEmailDomainsAnnotation]
	subjectGrant, hasSubjects := nsAnnotations[chatv1alpha1.OwnerSubjectsAnnotation]
	if !hasDomains && !hasSubjects {
		return owners, nil
	}
	domains, subjects := splitList(domainGrant), splitList(subjectGrant)
	for _, o := range owners {
		if o.Subject != "" {
			if slices.Contains(subjects, o.Subject) {
				kept = append(kept, o)
			} else {
				leftOut = append(leftOut, "subject "+o.Subject)
			}
			continue
		}
		at := strings.LastIndexByte(o.Email, '@')
		if at >= 0 && slices.ContainsFunc(domains, func(d string) bool { return tenant.EqualFoldASCII(o.Email[at+1:], d) }) {
			kept = append(kept, o)
			continue
		}
		leftOut = append(leftOut, o.Email)
	}
	return kept, leftOut
}

// splitList returns the non-empty, trimmed items of a comma-separated annotation value.
func splitList(v string) []string {
	var items []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// selectorProblem reports an allowedNamespaces that is no valid label selector (an operator In without values,
// say), which the schema lets through and granted treats as granting nothing.
func selectorProblem(selector *metav1.LabelSelector) *problem {
	if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
		return newProblem(chatv1alpha1.ReasonInvalidAllowedNamespaces,
			"allowedNamespaces is not a valid label selector, so no namespace is granted: %s", err)
	}
	return nil
}

// granted decides whether a grant (a Plan's or ChatRuntime's allowedNamespaces) covers a namespace with the
// given labels: an unset or empty selector grants every namespace; a selector that does not parse grants none.
func granted(selector *metav1.LabelSelector, nsLabels map[string]string) bool {
	if selector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(nsLabels))
}

// suspended decides whether a merchant's chat is refused: when the tenant suspends it (spec.suspended), or when
// the platform team has labelled its namespace suspended, which the tenant cannot undo.
func suspended(m *chatv1alpha1.Merchant, nsLabels map[string]string) bool {
	return m.Spec.Suspended || nsLabels[chatv1alpha1.SuspendedLabel] == "true"
}

// withoutRevokedKeys returns the published keys that are still usable (by hash), and whether any was dropped.
func withoutRevokedKeys(published []tenant.APIKey, usable []render.ResolvedKey) ([]tenant.APIKey, bool) {
	still := make(map[string]bool, len(usable))
	for _, k := range usable {
		still[k.SHA256] = true
	}
	kept := make([]tenant.APIKey, 0, len(published))
	for _, k := range published {
		if still[k.SHA256] {
			kept = append(kept, k)
		}
	}
	return kept, len(kept) != len(published)
}

// usableKeys resolves the merchant's keys within its runtime's apiKeysPerMerchant whose Secrets are in order and
// whose values no other merchant uses. Keys with a problem are left out; the APIKey reconciler reports why.
// pending says that a key's generated Secret is yet to come (secretPending).
func (r *MerchantReconciler) usableKeys(ctx context.Context, m *chatv1alpha1.Merchant, limits chatv1alpha1.TenantLimits) (keys []render.ResolvedKey, pending bool, err error) {
	var list chatv1alpha1.APIKeyList
	if err := r.List(ctx, &list, client.InNamespace(m.Namespace), client.MatchingFields{apiKeyMerchantIndex: m.Name}); err != nil {
		return nil, false, fmt.Errorf("listing API keys: %w", err)
	}
	past := keysPastLimit(list.Items, limits)
	for i := range list.Items {
		k := &list.Items[i]
		if !k.DeletionTimestamp.IsZero() || past[k.UID] {
			continue
		}
		resolved, _, err := resolveKey(ctx, r.Secrets, k)
		if err == nil {
			err = keyInUse(ctx, r.Client, r.Namespace, resolved.SHA256, render.Source(m))
		}
		if p, err := asProblem(err); err != nil {
			return nil, false, err
		} else if p != nil {
			pending = pending || secretPending(k.Spec.ExistingSecretRef == nil, p, k.Status.ObservedGeneration, k.Generation, k.Status.Conditions)
			continue
		}
		keys = append(keys, resolved)
	}
	return keys, pending, nil
}

// usableWebhooks resolves the merchant's webhooks whose signing secrets are in order. pending says that a
// webhook's generated signing secret is yet to come (secretPending).
func (r *MerchantReconciler) usableWebhooks(ctx context.Context, m *chatv1alpha1.Merchant) (hooks []render.ResolvedWebhook, pending bool, err error) {
	var list chatv1alpha1.WebhookList
	if err := r.List(ctx, &list, client.InNamespace(m.Namespace), client.MatchingFields{webhookMerchantIndex: m.Name}); err != nil {
		return nil, false, fmt.Errorf("listing webhooks: %w", err)
	}
	for i := range list.Items {
		w := &list.Items[i]
		if !w.DeletionTimestamp.IsZero() {
			continue
		}
		secrets, err := resolveSigningSecrets(ctx, r.Secrets, w)
		if p, err := asProblem(err); err != nil {
			return nil, false, err
		} else if p != nil {
			pending = pending || secretPending(w.Spec.SigningSecretRef == nil, p, w.Status.ObservedGeneration, w.Generation, w.Status.Conditions)
			continue
		}
		hooks = append(hooks, render.ResolvedWebhook{Webhook: w, SigningSecrets: secrets})
	}
	return hooks, pending, nil
}

// addFinalizer adds the finalizer that retires the Merchant's bundle, before its first bundle is written. It is
// added only then, not at the Merchant's first reconcile: a Merchant waiting for its keys' Secrets is often
// reconciled again before its own update has reached the cache, and would write the finalizer again, in vain.
func (r *MerchantReconciler) addFinalizer(ctx context.Context, m *chatv1alpha1.Merchant) error {
	if !controllerutil.AddFinalizer(m, merchantFinalizer) {
		return nil
	}
	version := m.ResourceVersion
	if err := r.Update(ctx, m); apierrors.IsConflict(err) {
		return errCacheBehind
	} else if err != nil {
		return fmt.Errorf("adding finalizer: %w", err)
	}
	r.writes.wrote(client.ObjectKeyFromObject(m), version, m.ResourceVersion)
	return nil
}

// errCacheBehind stops a reconcile without a write when the cache holds an older version of an object than the
// API server: the newer version's event brings it back.
var errCacheBehind = errors.New("the cache is behind")

// errPending stops a Merchant's reconcile without a write while a generated Secret of one of its APIKeys or
// Webhooks is yet to come (secretPending).
var errPending = errors.New("a generated Secret is yet to come")

// secretPending decides whether the Secret of an APIKey or Webhook, missing from the cache (p, its problem), is
// yet to come: the operator generates it (generated), and has either not reconciled the owner at its current
// generation, or has and found the Secret usable (the owner is Ready there), so that the Secret's event is still
// on its way to this cache. A Merchant created with its keys and webhooks then publishes its bundle and status
// once, when their Secrets are there, rather than once more for each: the Secret's event brings it back, or the
// owner's status when the Secret cannot be made or is gone.
func secretPending(generated bool, p *problem, observedGeneration, generation int64, conds []metav1.Condition) bool {
	if !generated || p.reason != chatv1alpha1.ReasonSecretNotFound {
		return false
	}
	if observedGeneration != generation {
		return true
	}
	c := meta.FindStatusCondition(conds, chatv1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

// applyBundle creates the bundle Secret, or updates it when it is this Merchant's and its content changed. A
// bundle of another Merchant with the same ID is never touched: the first Merchant keeps the ID.
func (r *MerchantReconciler) applyBundle(ctx context.Context, want *corev1.Secret) error {
	var got corev1.Secret
	err := r.Get(ctx, client.ObjectKeyFromObject(want), &got)
	if apierrors.IsNotFound(err) && r.bundles.hasBundle(want) {
		return nil // created a moment ago as it is now; its event has not reached the cache yet
	}
	if apierrors.IsNotFound(err) {
		// Create, not apply: of two Merchants racing for one ID, exactly one wins.
		err = r.Create(ctx, want)
		if err == nil {
			r.bundles.addBundle(want)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating tenant bundle %s: %w", want.Name, err)
		}
		// The cache is behind: the bundle was created a moment ago, by this Merchant or by another one
		// claiming the same ID. Compare with the stored one rather than fail and retry.
		err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), &got)
	}
	if err != nil {
		return fmt.Errorf("reading tenant bundle %s: %w", want.Name, err)
	}
	if got.Annotations[render.SourceAnnotation] != want.Annotations[render.SourceAnnotation] {
		return idConflict(want.Labels[chatv1alpha1.MerchantIDLabel], got.Annotations[render.RetiredAnnotation] != "")
	}
	_, retired := got.Annotations[render.RetiredAnnotation]
	if !retired && bytes.Equal(got.Data[tenant.DataKey], want.Data[tenant.DataKey]) && hasAll(got.Labels, want.Labels) {
		return nil
	}
	delete(got.Annotations, render.RetiredAnnotation)
	withdraw(&got, publishedKeyHashes(want))
	got.Data = want.Data
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	maps.Copy(got.Labels, want.Labels)
	if err := r.Update(ctx, &got); apierrors.IsConflict(err) {
		// The cached bundle is older than the stored one, as it is when this Merchant's last update has not
		// reached the cache yet: that update's event brings the Merchant back to compare with it.
		return errCacheBehind
	} else if err != nil {
		return fmt.Errorf("updating tenant bundle %s: %w", want.Name, err)
	}
	return nil
}

// idConflict is the problem of a Merchant whose ID another Merchant holds, or held before it was deleted (retired).
// It names neither that Merchant nor its namespace.
func idConflict(id string, retired bool) *problem {
	if retired {
		return newProblem(chatv1alpha1.ReasonMerchantIDConflict, "merchant ID %s belonged to a deleted merchant "+
			"whose data may still exist; it cannot be claimed from another Merchant: choose another merchantID", id)
	}
	return newProblem(chatv1alpha1.ReasonMerchantIDConflict,
		"merchant ID %s is already used by another merchant; choose another merchantID", id)
}

func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// finalize retires the Merchant's bundle (only if it is its own) and then removes the finalizer. Retiring, not
// deleting, keeps the merchant ID from another namespace while the runtime still holds the merchant's data.
func (r *MerchantReconciler) finalize(ctx context.Context, m *chatv1alpha1.Merchant) error {
	if !controllerutil.ContainsFinalizer(m, merchantFinalizer) {
		return nil
	}
	bundles, err := merchantBundles(ctx, r.Client, r.Namespace, render.MerchantID(m))
	if err != nil {
		return err
	}
	if err := r.retireOwn(ctx, m, bundles, ""); err != nil {
		return err
	}
	r.Metrics.forget(m.Namespace, m.Name)
	controllerutil.RemoveFinalizer(m, merchantFinalizer)
	return r.Update(ctx, m)
}

// ownLive reports whether a tenant bundle is the Merchant's and not retired.
func ownLive(bundle *corev1.Secret, m *chatv1alpha1.Merchant) bool {
	_, retired := bundle.Annotations[render.RetiredAnnotation]
	return !retired && bundle.Annotations[render.SourceAnnotation] == render.Source(m)
}

// retireOwn retires the Merchant's live bundles among bundles, but for the one in namespace keep.
func (r *MerchantReconciler) retireOwn(ctx context.Context, m *chatv1alpha1.Merchant, bundles []corev1.Secret, keep string) error {
	for i := range bundles {
		b := &bundles[i]
		if b.Namespace == keep || !ownLive(b, m) {
			continue
		}
		if err := r.Update(ctx, retire(b, r.Now())); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("retiring tenant bundle %s/%s: %w", b.Namespace, b.Name, err)
		}
	}
	return nil
}

// retire empties a tenant bundle and labels it retired, so that no runtime serves it (its keys are revoked at
// once) while the runtime named by its runtime label still finds it, to erase the merchant's data once the
// ChatRuntime's deletedMerchantRetention has passed. The Secret stays, with its source and merchant ID, marked
// retired at now: the ID is never free for another Merchant, even after erasure.
func retire(bundle *corev1.Secret, now time.Time) *corev1.Secret {
	withdraw(bundle, nil) // its keys stay the deleted merchant's
	bundle.Data = nil
	if bundle.Labels == nil {
		bundle.Labels = map[string]string{}
	}
	bundle.Labels[chatv1alpha1.TenantLabel] = contract.TenantRetired
	if bundle.Annotations == nil {
		bundle.Annotations = map[string]string{}
	}
	bundle.Annotations[render.RetiredAnnotation] = now.UTC().Format(time.RFC3339)
	return bundle
}

// SetupWithManager watches Merchants and everything their bundle is made of.
func (r *MerchantReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.writes = newOwnWrites()
	r.arrivals = newArrivals(r.Now)
	r.bundles = newOwnSecrets(r.Now)
	self := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Its own status write and finalizer must not wake it: the next reconcile could find the bundle it has
		// just created missing from the cache, and write it again.
		For(&chatv1alpha1.Merchant{}, notOwnFinalizer(merchantFinalizer)).
		Watches(&chatv1alpha1.Merchant{}, r.writes.forget()).
		Watches(&chatv1alpha1.Merchant{}, r.arrivals.record(self)).
		Watches(&chatv1alpha1.APIKey{}, r.arrivals.record(merchantOf)).
		Watches(&chatv1alpha1.Webhook{}, r.arrivals.record(merchantOf)).
		// Only a spec change reaches the bundles: a Plan's or ChatRuntime's status changes with every merchant
		// added, and must not re-render every bundle each time.
		Watches(&chatv1alpha1.Plan{}, handler.EnqueueRequestsFromMapFunc(r.merchantsOfPlan), specChanges()).
		Watches(&chatv1alpha1.ChatRuntime{}, handler.EnqueueRequestsFromMapFunc(r.merchantsOfRuntime), specChanges()).
		Watches(&chatv1alpha1.APIKey{}, handler.EnqueueRequestsFromMapFunc(merchantOf)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.merchantsOfNamespace), builder.OnlyMetadata).
		// A Merchant deleted makes room, under its runtime's merchantsPerNamespace, for the others of its namespace.
		Watches(&chatv1alpha1.Merchant{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.merchantsOfNamespace(ctx, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: o.GetNamespace()}})
		}), onlyDeletes()).
		Watches(&chatv1alpha1.Webhook{}, handler.EnqueueRequestsFromMapFunc(merchantOf)).
		// A knowledge source's status changes with every report of its runtime; only its spec is in the bundle.
		Watches(&chatv1alpha1.KnowledgeSource{}, handler.EnqueueRequestsFromMapFunc(merchantOf), specChanges()).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.merchantsOfSecret),
			builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelAPIKey))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.merchantsOfSigningSecret),
			builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelSigningSecret))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return requestsFor(ctx, r.Client, &chatv1alpha1.MerchantList{}, o.GetNamespace(), merchantOwnKeyIndex, o.GetName())
		}), builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelProviderKey))).
		// A bundle's creation is the Merchant's own write (or a rival's, which its create finds): only a bundle
		// edited or deleted brings it back. Woken by its own create, it would find its status patch not cached
		// yet, and write it and its first Ready event again.
		Watches(&corev1.Secret{}, r.bundles.forgetThen(handler.EnqueueRequestsFromMapFunc(merchantOfBundle)),
			builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelTenant))).
		WithOptions(controllerOptions(workers)).
		Named("merchant").
		Complete(r)
}

func (r *MerchantReconciler) merchantsOfPlan(ctx context.Context, o client.Object) []reconcile.Request {
	return requestsFor(ctx, r.Client, &chatv1alpha1.MerchantList{}, "", merchantPlanIndex, o.GetName())
}

// merchantsOfNamespace maps a namespace to its Merchants, whose grants and suspension follow its labels.
func (r *MerchantReconciler) merchantsOfNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list chatv1alpha1.MerchantList
	if err := r.List(ctx, &list, client.InNamespace(o.GetName())); err != nil {
		logf.FromContext(ctx).Error(err, "listing merchants to enqueue", "namespace", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return reqs
}

func (r *MerchantReconciler) merchantsOfRuntime(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.Namespace {
		return nil
	}
	return requestsFor(ctx, r.Client, &chatv1alpha1.MerchantList{}, "", merchantRuntimeIndex, o.GetName())
}

func (r *MerchantReconciler) merchantsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, k := range requestsFor(ctx, r.Client, &chatv1alpha1.APIKeyList{}, o.GetNamespace(), apiKeySecretIndex, o.GetName()) {
		var key chatv1alpha1.APIKey
		if r.Get(ctx, k.NamespacedName, &key) == nil {
			reqs = append(reqs, merchantOf(ctx, &key)...)
		}
	}
	return reqs
}

func (r *MerchantReconciler) merchantsOfSigningSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, w := range requestsFor(ctx, r.Client, &chatv1alpha1.WebhookList{}, o.GetNamespace(), webhookSecretIndex, o.GetName()) {
		var hook chatv1alpha1.Webhook
		if r.Get(ctx, w.NamespacedName, &hook) == nil {
			reqs = append(reqs, merchantOf(ctx, &hook)...)
		}
	}
	return reqs
}

// merchantOf maps an APIKey or Webhook to its Merchant.
func merchantOf(_ context.Context, o client.Object) []reconcile.Request {
	var name string
	switch obj := o.(type) {
	case *chatv1alpha1.APIKey:
		name = obj.Spec.MerchantRef.Name
	case *chatv1alpha1.Webhook:
		name = obj.Spec.MerchantRef.Name
	case *chatv1alpha1.KnowledgeSource:
		name = obj.Spec.MerchantRef.Name
	default:
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// merchantOfBundle maps a tenant bundle back to its Merchant, so that a deleted or edited bundle is restored.
func merchantOfBundle(_ context.Context, o client.Object) []reconcile.Request {
	ns, name, ok := splitSource(o.GetAnnotations()[render.SourceAnnotation])
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

func splitSource(s string) (namespace, name string, ok bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], i > 0 && i < len(s)-1
		}
	}
	return "", "", false
}
