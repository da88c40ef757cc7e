package render

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

func scaledRuntime(edit func(*chatv1alpha1.ChatRuntimeSpec)) *chatv1alpha1.ChatRuntime {
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "parley-system", UID: "uid-1"}}
	rt.Spec.Replicas = new(int32(1))
	rt.Spec.Storage = chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
		Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "pg"}}}
	if edit != nil {
		edit(&rt.Spec)
	}
	return rt
}

func TestReplicasAndDisruptionBudget(t *testing.T) {
	cases := []struct {
		name         string
		spec         func(*chatv1alpha1.ChatRuntimeSpec)
		wantReplicas *int32 // on the applied Deployment; nil means left to the autoscaler
		wantPDB      bool
	}{
		{"one replica", nil, new(int32(1)), false},
		{"three replicas", func(s *chatv1alpha1.ChatRuntimeSpec) { s.Replicas = new(int32(3)) }, new(int32(3)), true},
		{"autoscaling from one, replicas ignored", func(s *chatv1alpha1.ChatRuntimeSpec) {
			s.Replicas = new(int32(3))
			s.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(1)), MaxReplicas: 5}
		}, nil, false},
		{"autoscaling without a minimum", func(s *chatv1alpha1.ChatRuntimeSpec) {
			s.Autoscaling = &chatv1alpha1.AutoscalingSpec{MaxReplicas: 5}
		}, nil, false},
		{"autoscaling from two", func(s *chatv1alpha1.ChatRuntimeSpec) {
			s.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(2)), MaxReplicas: 5}
		}, nil, true},
	}
	for _, tc := range cases {
		rt := scaledRuntime(tc.spec)
		got := RuntimeDeployment(rt, "img").Spec.Replicas
		if (got == nil) != (tc.wantReplicas == nil) || (got != nil && *got != *tc.wantReplicas) {
			t.Errorf("%s: Deployment replicas %v, want %v", tc.name, ptrString(got), ptrString(tc.wantReplicas))
		}
		pdb := RuntimePodDisruptionBudget(rt)
		if (pdb != nil) != tc.wantPDB {
			t.Errorf("%s: PodDisruptionBudget %t, want %t", tc.name, pdb != nil, tc.wantPDB)
		}
		if pdb != nil && (pdb.Spec.MaxUnavailable.IntValue() != 1 || len(pdb.OwnerReferences) != 1) {
			t.Errorf("%s: budget %+v", tc.name, pdb.Spec)
		}
	}
}

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}

func TestRuntimeHorizontalPodAutoscaler(t *testing.T) {
	if hpa := RuntimeHorizontalPodAutoscaler(scaledRuntime(nil)); hpa != nil {
		t.Fatal("a runtime without autoscaling must have no HorizontalPodAutoscaler")
	}
	type metric struct {
		resource corev1.ResourceName
		percent  int32
	}
	cases := []struct {
		name     string
		as       chatv1alpha1.AutoscalingSpec
		min      int32
		wantMets []metric
	}{
		{"defaults", chatv1alpha1.AutoscalingSpec{MaxReplicas: 4}, 1, []metric{{corev1.ResourceCPU, 80}}},
		{"cpu", chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(2)), MaxReplicas: 10, TargetCPUUtilizationPercentage: new(int32(60))},
			2, []metric{{corev1.ResourceCPU, 60}}},
		{"cpu and memory", chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(3)), MaxReplicas: 3,
			TargetCPUUtilizationPercentage: new(int32(70)), TargetMemoryUtilizationPercentage: new(int32(90))},
			3, []metric{{corev1.ResourceCPU, 70}, {corev1.ResourceMemory, 90}}},
	}
	for _, tc := range cases {
		rt := scaledRuntime(func(s *chatv1alpha1.ChatRuntimeSpec) { s.Autoscaling = &tc.as })
		hpa := RuntimeHorizontalPodAutoscaler(rt)
		if hpa == nil {
			t.Fatalf("%s: no HorizontalPodAutoscaler", tc.name)
		}
		if *hpa.Name != "parley-runtime-default" || *hpa.Namespace != "parley-system" || len(hpa.OwnerReferences) != 1 ||
			*hpa.OwnerReferences[0].Kind != "ChatRuntime" || !*hpa.OwnerReferences[0].Controller {
			t.Errorf("%s: name, namespace or owner: %+v", tc.name, hpa.ObjectMetaApplyConfiguration)
		}
		ref := hpa.Spec.ScaleTargetRef
		if *ref.APIVersion != "apps/v1" || *ref.Kind != "Deployment" || *ref.Name != ServiceName(rt) {
			t.Errorf("%s: scales %s %s %s, want the runtime's Deployment", tc.name, *ref.APIVersion, *ref.Kind, *ref.Name)
		}
		if *hpa.Spec.MinReplicas != tc.min || *hpa.Spec.MaxReplicas != tc.as.MaxReplicas {
			t.Errorf("%s: replicas %d to %d, want %d to %d", tc.name, *hpa.Spec.MinReplicas, *hpa.Spec.MaxReplicas, tc.min, tc.as.MaxReplicas)
		}
		var got []metric
		for _, m := range hpa.Spec.Metrics {
			if *m.Type != "Resource" || *m.Resource.Target.Type != "Utilization" {
				t.Errorf("%s: metric %+v is not a resource utilization", tc.name, m)
				continue
			}
			got = append(got, metric{*m.Resource.Name, *m.Resource.Target.AverageUtilization})
		}
		if !slices.Equal(got, tc.wantMets) {
			t.Errorf("%s: metrics %v, want %v", tc.name, got, tc.wantMets)
		}
	}
}

func TestRedisRateLimiterWiring(t *testing.T) {
	cases := []struct {
		name     string
		rl       *chatv1alpha1.RateLimiterSpec
		wantArgs []string
		wantEnv  *corev1.SecretKeySelector // PARLEY_REDIS_PASSWORD's source; nil for none
	}{
		{"none", nil, nil, nil},
		{"empty rateLimiter", &chatv1alpha1.RateLimiterSpec{}, nil, nil},
		{"address only", &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{Address: "redis:6379"}},
			[]string{"--redis-address=redis:6379"}, nil},
		{"everything", &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{Address: "redis.cache.svc:6380", TLS: true,
			KeyPrefix: "eu1:", PasswordSecretRef: &chatv1alpha1.SecretKeySelector{Name: "redis-auth"}}},
			[]string{"--redis-address=redis.cache.svc:6380", "--redis-tls", "--redis-key-prefix=eu1:"},
			&corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "redis-auth"}, Key: "password"}},
		{"password under another key", &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{Address: "redis:6379",
			PasswordSecretRef: &chatv1alpha1.SecretKeySelector{Name: "redis-auth", Key: "redis-password"}}},
			[]string{"--redis-address=redis:6379"},
			&corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "redis-auth"}, Key: "redis-password"}},
	}
	for _, tc := range cases {
		rt := scaledRuntime(func(s *chatv1alpha1.ChatRuntimeSpec) { s.RateLimiter = tc.rl })
		var redisArgs []string
		for _, a := range RuntimeArgs(rt) {
			if strings.HasPrefix(a, "--redis") {
				redisArgs = append(redisArgs, a)
			}
			if strings.Contains(a, "redis-auth") || strings.Contains(a, "password") {
				t.Errorf("%s: argument %q names the password", tc.name, a)
			}
		}
		if !slices.Equal(redisArgs, tc.wantArgs) {
			t.Errorf("%s: args %v, want %v", tc.name, redisArgs, tc.wantArgs)
		}
		c := RuntimeDeployment(rt, "img").Spec.Template.Spec.Containers[0]
		var got *corev1.SecretKeySelector
		for _, e := range c.Env {
			if *e.Name != "PARLEY_REDIS_PASSWORD" {
				continue
			}
			if e.Value != nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Fatalf("%s: the password is not taken from its Secret: %+v", tc.name, e)
			}
			got = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: *e.ValueFrom.SecretKeyRef.Name},
				Key: *e.ValueFrom.SecretKeyRef.Key}
		}
		if (got == nil) != (tc.wantEnv == nil) || (got != nil && *got != *tc.wantEnv) {
			t.Errorf("%s: PARLEY_REDIS_PASSWORD from %+v, want %+v", tc.name, got, tc.wantEnv)
		}
	}
}

func TestRuntimeReadyWithAutoscaling(t *testing.T) {
	rt := scaledRuntime(func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(2)), MaxReplicas: 6}
	})
	dep := func(replicas *int32, available int32) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Spec.Replicas = replicas
		d.Status = appsv1.DeploymentStatus{UpdatedReplicas: available, AvailableReplicas: available}
		return d
	}
	cases := []struct {
		name string
		d    *appsv1.Deployment
		want metav1.ConditionStatus
	}{
		{"defaulted to one, autoscaler not there yet", dep(new(int32(1)), 1), metav1.ConditionFalse},
		{"at the minimum", dep(new(int32(2)), 2), metav1.ConditionTrue},
		{"scaled to five, three available", dep(new(int32(5)), 3), metav1.ConditionFalse},
		{"scaled to five, all available", dep(new(int32(5)), 5), metav1.ConditionTrue},
	}
	for _, tc := range cases {
		if c := RuntimeReady(rt, tc.d); c.Status != tc.want {
			t.Errorf("%s: %s (%s)", tc.name, c.Status, c.Message)
		}
	}
}

func TestManagesReplicasAndHandoff(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	withReplicas := `{"f:spec":{"f:replicas":{},"f:template":{}}}`
	withoutReplicas := `{"f:spec":{"f:template":{}}}`
	cases := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"no managed fields", nil, false},
		{"applied with replicas", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationApply, withReplicas)}, true},
		{"applied without replicas", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationApply, withoutReplicas)}, false},
		{"replicas held by the autoscaler", []metav1.ManagedFieldsEntry{
			entry(FieldOwner, metav1.ManagedFieldsOperationApply, withoutReplicas),
			entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:replicas":{}}}`)}, false},
		{"another applier", []metav1.ManagedFieldsEntry{entry("kubectl", metav1.ManagedFieldsOperationApply, withReplicas)}, false},
		{"garbage", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationApply, `not json`)}, false},
	}
	auto := scaledRuntime(func(s *chatv1alpha1.ChatRuntimeSpec) { s.Autoscaling = &chatv1alpha1.AutoscalingSpec{MaxReplicas: 5} })
	fixed := scaledRuntime(nil)
	for _, tc := range cases {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "parley-runtime-default", Namespace: "parley-system", ManagedFields: tc.entries}}
		d.Spec.Replicas = new(int32(4))
		if got := ManagesReplicas(d, FieldOwner); got != tc.want {
			t.Errorf("%s: ManagesReplicas %t, want %t", tc.name, got, tc.want)
		}
		h := ReplicasHandoff(auto, d)
		if (h != nil) != tc.want || (h != nil && (*h.Spec.Replicas != 4 || *h.Name != d.Name || h.Spec.Template != nil)) {
			t.Errorf("%s: handoff %+v", tc.name, h)
		}
		if ReplicasHandoff(fixed, d) != nil {
			t.Errorf("%s: a handoff without autoscaling", tc.name)
		}
	}
	if ReplicasHandoff(auto, nil) != nil {
		t.Error("a handoff without a Deployment")
	}
}
