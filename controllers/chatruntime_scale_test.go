//go:build integration

package controllers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
)

// The Redis rate limiter reaches the runtime as arguments, and its password as an environment variable taken
// from the Secret, never as a value in the Deployment.
func TestRuntimeRedisRateLimiter(t *testing.T) {
	const password = "redis-password-never-in-the-deployment"
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "redis-auth", Namespace: operatorNS},
		StringData: map[string]string{"password": password}})
	rt := runtimeObj("redis-limits")
	rt.Spec.RateLimiter = &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{
		Address: "redis.parley-system.svc:6379", TLS: true,
		PasswordSecretRef: &chatv1alpha1.SecretKeySelector{Name: "redis-auth"}}}
	create(t, rt)
	key := types.NamespacedName{Namespace: operatorNS, Name: render.ServiceName(rt)}

	var d appsv1.Deployment
	eventually(t, "Deployment with the Redis limiter", func() error {
		if err := k8s.Get(ctxT(t), key, &d); err != nil {
			return err
		}
		if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--redis-address=redis.parley-system.svc:6379") ||
			!slices.Contains(args, "--redis-tls") {
			return fmt.Errorf("args %v", args)
		}
		return nil
	})
	env := d.Spec.Template.Spec.Containers[0].Env
	i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == "PARLEY_REDIS_PASSWORD" })
	if i < 0 || env[i].Value != "" || env[i].ValueFrom == nil || env[i].ValueFrom.SecretKeyRef == nil ||
		env[i].ValueFrom.SecretKeyRef.Name != "redis-auth" || env[i].ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("PARLEY_REDIS_PASSWORD is not taken from the Secret: %+v", env)
	}
	for _, obj := range []client.Object{&d, rt} {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		if raw, _ := json.Marshal(obj); strings.Contains(string(raw), password) {
			t.Errorf("the Redis password is in the %T", obj)
		}
	}

	// Without the limiter, the arguments and the variable go again.
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.RateLimiter = nil })
	eventually(t, "Redis limiter removed", func() error {
		if err := k8s.Get(ctxT(t), key, &d); err != nil {
			return err
		}
		c := d.Spec.Template.Spec.Containers[0]
		if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--redis") }) ||
			slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "PARLEY_REDIS_PASSWORD" }) {
			return fmt.Errorf("args %v env %v", c.Args, c.Env)
		}
		return nil
	})
}

// Autoscaling renders a HorizontalPodAutoscaler and leaves the Deployment's replica count to it: switching it on
// keeps the running count, the operator stops owning the field, and a count set by the autoscaler survives the
// next reconcile. Switching it off deletes the autoscaler and gives the count back to spec.replicas.
// It runs in the operator's namespace and in a target namespace of its own.
func TestRuntimeAutoscaling(t *testing.T) {
	t.Run("own namespace", func(t *testing.T) { testRuntimeAutoscaling(t, "autoscaled", "") })
	t.Run("target namespace", func(t *testing.T) { testRuntimeAutoscaling(t, "autoscaled-target", newNamespace(t)) })
}

func testRuntimeAutoscaling(t *testing.T, name, target string) {
	rt := runtimeObj(name)
	rt.Spec.TargetNamespace = target
	rt.Spec.Replicas = new(int32(3))
	rt.Spec.Storage = chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
		Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "pg"}}}
	create(t, rt)
	key := types.NamespacedName{Namespace: render.TargetNamespace(rt), Name: render.ServiceName(rt)}
	deployment := func() *appsv1.Deployment {
		var d appsv1.Deployment
		if err := k8s.Get(ctxT(t), key, &d); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	var d appsv1.Deployment
	eventually(t, "Deployment with 3 replicas", func() error {
		if err := k8s.Get(ctxT(t), key, &d); err != nil {
			return err
		}
		if *d.Spec.Replicas != 3 {
			return fmt.Errorf("%d replicas", *d.Spec.Replicas)
		}
		return nil
	})
	if !render.ManagesReplicas(&d, render.FieldOwner) {
		t.Fatal("without autoscaling the operator must own the replica count")
	}
	if err := k8s.Get(ctxT(t), key, &autoscalingv2.HorizontalPodAutoscaler{}); !apierrors.IsNotFound(err) {
		t.Errorf("a runtime without autoscaling has a HorizontalPodAutoscaler: %v", err)
	}

	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) {
		rt.Spec.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(2)), MaxReplicas: 6,
			TargetCPUUtilizationPercentage: new(int32(70))}
	})
	var hpa autoscalingv2.HorizontalPodAutoscaler
	eventually(t, "HorizontalPodAutoscaler", func() error { return k8s.Get(ctxT(t), key, &hpa) })
	// Owned where the runtime is; in a target namespace, which an owner reference cannot cross, labelled.
	rendered := metav1.IsControlledBy(&hpa, rt)
	if target != "" {
		rendered = len(hpa.OwnerReferences) == 0 && hpa.Labels[render.InstanceLabel] == rt.Name
	}
	if !rendered || *hpa.Spec.MinReplicas != 2 || hpa.Spec.MaxReplicas != 6 ||
		hpa.Spec.ScaleTargetRef != (autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: key.Name}) ||
		len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
		*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 70 {
		t.Errorf("HorizontalPodAutoscaler spec %+v, owners %+v", hpa.Spec, hpa.OwnerReferences)
	}
	if !slices.ContainsFunc(hpa.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == render.FieldOwner && f.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Errorf("the HorizontalPodAutoscaler was not server-side applied by %s", render.FieldOwner)
	}
	eventually(t, "the operator gives up the replica count", func() error {
		if d := deployment(); render.ManagesReplicas(d, render.FieldOwner) {
			return fmt.Errorf("%s still owns spec.replicas", render.FieldOwner)
		}
		return nil
	})
	if d := deployment(); *d.Spec.Replicas != 3 {
		t.Errorf("switching autoscaling on changed the running count from 3 to %d", *d.Spec.Replicas)
	}
	if err := k8s.Get(ctxT(t), key, &policyv1.PodDisruptionBudget{}); err != nil {
		t.Errorf("autoscaling from 2 replicas needs a PodDisruptionBudget: %v", err)
	}

	// The autoscaler scales to 5 (simulated: envtest runs no kube-controller-manager) with an update under a field
	// manager of its own, which takes the field over as the real one does.
	scaleTo := func(n int32) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d := deployment()
			d.Spec.Replicas = new(n)
			return k8s.Update(ctxT(t), d, client.FieldOwner("horizontal-pod-autoscaler"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	scaleTo(5)
	// A change of the ChatRuntime makes the operator reconcile and apply the Deployment again.
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.Autoscaling.MaxReplicas = 7 })
	eventually(t, "maxReplicas 7 applied", func() error {
		if err := k8s.Get(ctxT(t), key, &hpa); err != nil {
			return err
		}
		if hpa.Spec.MaxReplicas != 7 {
			return fmt.Errorf("maxReplicas %d", hpa.Spec.MaxReplicas)
		}
		return nil
	})
	waitReady(t, rt, metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady) // reconciled at the new generation
	if d := deployment(); *d.Spec.Replicas != 5 {
		t.Errorf("the operator overwrote the autoscaler's 5 replicas with %d", *d.Spec.Replicas)
	}
	markDeploymentAvailable(t, key.Namespace, key.Name)
	waitReady(t, rt, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)

	// From one replica up, a budget would block drains: it goes.
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.Autoscaling.MinReplicas = new(int32(1)) })
	eventually(t, "PodDisruptionBudget removed at minReplicas 1", func() error {
		return absent(k8s.Get(ctxT(t), key, &policyv1.PodDisruptionBudget{}))
	})

	// Autoscaling off: the autoscaler goes, spec.replicas rules again.
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.Autoscaling, rt.Spec.Replicas = nil, new(int32(2)) })
	eventually(t, "HorizontalPodAutoscaler deleted", func() error {
		return absent(k8s.Get(ctxT(t), key, &hpa))
	})
	eventually(t, "replicas back to spec.replicas", func() error {
		d := deployment()
		if *d.Spec.Replicas != 2 || !render.ManagesReplicas(d, render.FieldOwner) {
			return fmt.Errorf("%d replicas, owned by the operator: %t", *d.Spec.Replicas, render.ManagesReplicas(d, render.FieldOwner))
		}
		return nil
	})
	eventually(t, "PodDisruptionBudget back", func() error { return k8s.Get(ctxT(t), key, &policyv1.PodDisruptionBudget{}) })
}
