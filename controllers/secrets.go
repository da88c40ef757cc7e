package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/render"
)

// problem is a state of the user's objects that a reconcile cannot fix by retrying soon: it becomes a
// Ready=False condition with its reason, and the reconcile waits for the next change.
type problem struct {
	reason  string
	message string
}

func (p *problem) Error() string { return p.reason + ": " + p.message }

// newProblem makes a problem with a reason and a formatted message.
func newProblem(reason, format string, args ...any) *problem {
	return &problem{reason: reason, message: fmt.Sprintf(format, args...)}
}

// secretReader reads Secrets through the label-filtered cache and, only to explain a miss, straight from the
// API server.
type secretReader struct {
	cache client.Reader
	// api explains a cache miss; without it a miss is a SecretNotFound problem, which suits a reader that only
	// needs what is usable and is brought back by the Secret's event once the cache has it.
	api client.Reader
	// known is a Secret this reconcile has just created or read from the API server, which the cache lacks.
	known *corev1.Secret
}

// withKnown returns a reader that knows s, a Secret the cache lacks and this reconcile has just created or read,
// without asking the API server for it again.
func (r secretReader) withKnown(s *corev1.Secret) secretReader {
	r.known = s
	return r
}

// get returns a labelled Secret, or a problem saying whether it is missing or merely unlabelled. A cache miss
// is checked against the API server: a Secret created a moment ago may not be in the cache yet.
func (r secretReader) get(ctx context.Context, namespace, name, label string) (*corev1.Secret, error) {
	if c := r.known; c != nil && c.Namespace == namespace && c.Name == name {
		return c.DeepCopy(), nil
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	var s corev1.Secret
	err := r.cache.Get(ctx, key, &s)
	if err == nil {
		return &s, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	if r.api == nil {
		return nil, newProblem(chatv1alpha1.ReasonSecretNotFound, "Secret %s does not exist", name)
	}
	switch err := r.api.Get(ctx, key, &s); {
	case apierrors.IsNotFound(err):
		return nil, newProblem(chatv1alpha1.ReasonSecretNotFound, "Secret %s does not exist", name)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	case s.Labels[chatv1alpha1.SecretLabel] != label:
		return nil, newProblem(chatv1alpha1.ReasonSecretNotLabelled,
			"Secret %s exists but lacks the label %s=%s that lets the operator watch it", name, chatv1alpha1.SecretLabel, label)
	default:
		return &s, nil
	}
}

// value returns one key of a labelled Secret.
func (r secretReader) value(ctx context.Context, namespace string, ref chatv1alpha1.SecretKeySelector, label string) (string, *corev1.Secret, error) {
	s, err := r.get(ctx, namespace, ref.Name, label)
	if err != nil {
		return "", nil, err
	}
	v, ok := s.Data[ref.Key]
	if !ok || len(v) == 0 {
		return "", s, newProblem(chatv1alpha1.ReasonSecretNotFound, "Secret %s has no key %q", ref.Name, ref.Key)
	}
	return string(v), s, nil
}

// generatedSecret describes the Secret the operator generates for an object that brings none of its own: where
// it goes, the label that lets the operator watch it, how its value is made and the event announcing it.
type generatedSecret struct {
	ref      chatv1alpha1.SecretKeySelector
	label    string
	generate func() (string, error)
	// reason and note make the Normal event recorded on the owner when provideSecret announces the Secret.
	reason, note string
}

// provideSecret makes sure the owner's generated Secret exists. It returns the Secret when the cache lacks it
// (created now, or read from the API server), for the rest of the reconcile to use; nil when the cache has it. A
// nil g (the owner brings its own Secret) needs nothing. A Secret created for an owner reconciled before (it has
// a Ready condition) is announced as an event: it holds a new value where one was deleted, or arrives after a
// problem was reported. One created with its owner is not: its owner's status tells.
func provideSecret(ctx context.Context, c client.Client, r secretReader, own *ownSecrets, rec recorder.EventRecorder,
	owner client.Object, conds []metav1.Condition, g *generatedSecret) (*corev1.Secret, error) {
	if g == nil {
		return nil, nil
	}
	s, created, err := ensureGenerated(ctx, c, r, own, owner, g)
	if created && meta.FindStatusCondition(conds, chatv1alpha1.ConditionReady) != nil {
		rec.Eventf(owner, nil, corev1.EventTypeNormal, g.reason, actionGenerate, "%s", g.note)
	}
	return s, err
}

// ensureGenerated creates an owned Secret holding a freshly generated value, once. It returns the Secret when the
// cache lacks it, and whether it created it. An existing Secret is never rewritten, not even after an operator
// restart; one owned by someone else is a conflict, not something to take. A Secret missing from the cache is
// created without asking the API server first: it is almost always new, and one that exists after all (not
// cached yet, or unlabelled) makes the create fail and is looked at then. One this reconciler created itself
// (own) is read first instead: its event has merely not reached the cache yet.
func ensureGenerated(ctx context.Context, c client.Client, r secretReader, own *ownSecrets, owner client.Object,
	g *generatedSecret) (*corev1.Secret, bool, error) {
	key := types.NamespacedName{Namespace: owner.GetNamespace(), Name: g.ref.Name}
	var cached corev1.Secret
	switch err := r.cache.Get(ctx, key, &cached); {
	case err == nil:
		_, err := needsGenerating(&cached, nil, owner, g.ref.Name)
		return nil, false, err
	case !apierrors.IsNotFound(err):
		return nil, false, fmt.Errorf("reading Secret %s/%s: %w", key.Namespace, key.Name, err)
	}
	if own.has(key) {
		// Deleted meanwhile, it is generated again, as it would be had it not been remembered.
		if s, generate, err := existingGenerated(ctx, r, owner, g); err != nil || !generate {
			return s, false, err
		}
	}
	value, err := g.generate()
	if err != nil {
		return nil, false, fmt.Errorf("generating the value of Secret %s: %w", g.ref.Name, err)
	}
	gvk, err := c.GroupVersionKindFor(owner)
	if err != nil {
		return nil, false, fmt.Errorf("finding the kind of the owner of Secret %s: %w", g.ref.Name, err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      g.ref.Name,
			Namespace: owner.GetNamespace(),
			Labels: map[string]string{
				chatv1alpha1.SecretLabel:       g.label,
				"app.kubernetes.io/managed-by": render.FieldOwner,
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)},
		},
		Type:      corev1.SecretTypeOpaque,
		Immutable: new(true),
		Data:      map[string][]byte{g.ref.Key: []byte(value)},
	}
	err = c.Create(ctx, s)
	if err == nil {
		own.add(key, s.UID)
		return s, true, nil
	}
	if apierrors.IsForbidden(err) {
		return nil, false, secretsNotGranted(owner.GetNamespace(), g.ref.Name)
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, false, fmt.Errorf("creating Secret %s: %w", g.ref.Name, err)
	}
	if s, generate, err := existingGenerated(ctx, r, owner, g); err != nil || !generate {
		return s, false, err
	}
	return nil, false, fmt.Errorf("creating Secret %s: it was deleted meanwhile, retrying", g.ref.Name)
}

// existingGenerated reads from the API server a generated Secret the cache lacks, and decides with
// needsGenerating whether to generate it. It returns the Secret when it is the owner's, to be kept.
func existingGenerated(ctx context.Context, r secretReader, owner client.Object, g *generatedSecret) (*corev1.Secret, bool, error) {
	existing, err := r.get(ctx, owner.GetNamespace(), g.ref.Name, g.label)
	generate, err := needsGenerating(existing, err, owner, g.ref.Name)
	if err != nil || generate {
		return nil, generate, err
	}
	return existing, false, nil
}

// needsGenerating decides from the lookup of a Secret to generate (the Secret, or secretReader.get's error)
// whether to generate it: a missing one is generated, one the owner controls is kept as it is, and any other
// (someone else's, or unlabelled and so not the operator's) is a conflict. Other errors are returned to retry.
func needsGenerating(existing *corev1.Secret, lookupErr error, owner metav1.Object, name string) (bool, error) {
	var p *problem
	switch {
	case lookupErr == nil && metav1.IsControlledBy(existing, owner):
		return false, nil
	case lookupErr == nil, errors.As(lookupErr, &p) && p.reason == chatv1alpha1.ReasonSecretNotLabelled:
		return false, newProblem(chatv1alpha1.ReasonSecretConflict,
			"Secret %s exists and is not owned by this object; choose another name", name)
	case p != nil:
		return true, nil
	default:
		return false, lookupErr
	}
}

// resolveKey reads an APIKey's key from its Secret and describes it. The plaintext never leaves this function.
func resolveKey(ctx context.Context, r secretReader, k *chatv1alpha1.APIKey) (render.ResolvedKey, credentials.Key, error) {
	value, _, err := r.value(ctx, k.Namespace, k.KeySecretRef(), chatv1alpha1.SecretLabelAPIKey)
	if err != nil {
		return render.ResolvedKey{}, credentials.Key{}, err
	}
	d, err := credentials.Describe(value)
	if err != nil {
		return render.ResolvedKey{}, credentials.Key{}, newProblem(chatv1alpha1.ReasonInvalidSecret, "%s", err.Error())
	}
	return render.ResolvedKey{ID: d.ID, Type: k.Spec.Type, SHA256: d.SHA256, ExpiresAt: k.Spec.ExpiresAt}, d, nil
}

// resolveSigningSecrets reads a Webhook's signing secret, and the one being rotated out if present.
func resolveSigningSecrets(ctx context.Context, r secretReader, w *chatv1alpha1.Webhook) ([]string, error) {
	ref := w.SigningSecretRef()
	current, s, err := r.value(ctx, w.Namespace, ref, chatv1alpha1.SecretLabelSigningSecret)
	if err != nil {
		return nil, err
	}
	if err := credentials.CheckSigningSecret(current); err != nil {
		return nil, newProblem(chatv1alpha1.ReasonInvalidSecret, "key %q of Secret %s: %s", ref.Key, ref.Name, err)
	}
	secrets := []string{current}
	if prev := string(s.Data[chatv1alpha1.PreviousSigningSecretKey]); prev != "" {
		if err := credentials.CheckSigningSecret(prev); err != nil {
			return nil, newProblem(chatv1alpha1.ReasonInvalidSecret, "key %q of Secret %s: %s",
				chatv1alpha1.PreviousSigningSecretKey, ref.Name, err)
		}
		secrets = append(secrets, prev)
	}
	return secrets, nil
}

// secretsNotGranted is the problem of a Secret the operator may not create because the platform team has not
// granted it Secrets in the namespace (a RoleBinding to the ClusterRole parley-tenant-secrets).
func secretsNotGranted(namespace, name string) *problem {
	return newProblem(chatv1alpha1.ReasonSecretsNotGranted, "the operator may not create Secret %s in namespace %s: "+
		"bring your own Secret (existingSecretRef, signingSecretRef), or ask the platform team to grant the operator "+
		"Secrets in this namespace (ClusterRole parley-tenant-secrets)", name, namespace)
}
