package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

func newProblem(reason, format string, args ...any) *problem {
	return &problem{reason: reason, message: fmt.Sprintf(format, args...)}
}

// secretReader reads Secrets through the label-filtered cache and, only to explain a miss, straight from the
// API server.
type secretReader struct {
	cache client.Reader
	api   client.Reader
}

// get returns a labelled Secret, or a problem saying whether it is missing or merely unlabelled. A cache miss
// is checked against the API server: a Secret created a moment ago may not be in the cache yet.
func (r secretReader) get(ctx context.Context, namespace, name, label string) (*corev1.Secret, error) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	var s corev1.Secret
	err := r.cache.Get(ctx, key, &s)
	if err == nil {
		return &s, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
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

// ensureGenerated creates an owned Secret holding a freshly generated value, once. An existing Secret is never
// rewritten, not even after an operator restart; one owned by someone else is a conflict, not something to take.
func ensureGenerated(ctx context.Context, c client.Client, r secretReader, owner client.Object,
	ref chatv1alpha1.SecretKeySelector, label string, generate func() (string, error)) (created bool, err error) {
	existing, err := r.get(ctx, owner.GetNamespace(), ref.Name, label)
	if err == nil {
		if !metav1.IsControlledBy(existing, owner) {
			return false, newProblem(chatv1alpha1.ReasonSecretConflict,
				"Secret %s exists and is not owned by this object; choose another name", ref.Name)
		}
		return false, nil
	}
	var p *problem
	if !errors.As(err, &p) {
		return false, err
	}
	if p.reason == chatv1alpha1.ReasonSecretNotLabelled {
		return false, newProblem(chatv1alpha1.ReasonSecretConflict,
			"Secret %s exists and is not owned by this object; choose another name", ref.Name)
	}
	value, err := generate()
	if err != nil {
		return false, err
	}
	gvk, err := c.GroupVersionKindFor(owner)
	if err != nil {
		return false, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ref.Name,
			Namespace: owner.GetNamespace(),
			Labels: map[string]string{
				chatv1alpha1.SecretLabel:       label,
				"app.kubernetes.io/managed-by": render.FieldOwner,
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)},
		},
		Type:      corev1.SecretTypeOpaque,
		Immutable: new(true),
		Data:      map[string][]byte{ref.Key: []byte(value)},
	}
	if err := c.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("creating Secret %s: it appeared meanwhile, retrying", ref.Name)
		}
		return false, fmt.Errorf("creating Secret %s: %w", ref.Name, err)
	}
	return true, nil
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
