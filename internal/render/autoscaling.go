package render

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

const (
	defaultTargetCPU = 80

	// ReplicasHandoffFieldOwner holds the Deployment's replica count for the moment autoscaling is switched on,
	// so that the operator can stop owning it without the API server resetting it to 1 (a field no manager
	// owns any more is removed). The autoscaler's first change of the count takes it over.
	ReplicasHandoffFieldOwner = FieldOwner + "-replicas-handoff"
)

// RuntimeHorizontalPodAutoscaler scales the runtime's Deployment within spec.autoscaling; nil without it.
func RuntimeHorizontalPodAutoscaler(rt *chatv1alpha1.ChatRuntime) *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration {
	a := rt.Spec.Autoscaling
	if a == nil {
		return nil
	}
	cpu := int32(defaultTargetCPU)
	if a.TargetCPUUtilizationPercentage != nil {
		cpu = *a.TargetCPUUtilizationPercentage
	}
	metrics := []*autoscalingv2ac.MetricSpecApplyConfiguration{utilization(corev1.ResourceCPU, cpu)}
	if a.TargetMemoryUtilizationPercentage != nil {
		metrics = append(metrics, utilization(corev1.ResourceMemory, *a.TargetMemoryUtilizationPercentage))
	}
	return autoscalingv2ac.HorizontalPodAutoscaler(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().
			WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().
				WithAPIVersion("apps/v1").WithKind("Deployment").WithName(ServiceName(rt))).
			WithMinReplicas(minReplicas(rt)).
			WithMaxReplicas(a.MaxReplicas).
			WithMetrics(metrics...))
}

func utilization(name corev1.ResourceName, percent int32) *autoscalingv2ac.MetricSpecApplyConfiguration {
	return autoscalingv2ac.MetricSpec().
		WithType(autoscalingv2.ResourceMetricSourceType).
		WithResource(autoscalingv2ac.ResourceMetricSource().
			WithName(name).
			WithTarget(autoscalingv2ac.MetricTarget().
				WithType(autoscalingv2.UtilizationMetricType).
				WithAverageUtilization(percent)))
}

// ReplicasHandoff is the apply configuration, for ReplicasHandoffFieldOwner, that keeps a Deployment's current
// replica count when the operator stops owning it; nil when no handoff is needed: without autoscaling, without a
// Deployment yet, or once the operator no longer owns the count.
func ReplicasHandoff(rt *chatv1alpha1.ChatRuntime, d *appsv1.Deployment) *appsv1ac.DeploymentApplyConfiguration {
	if rt.Spec.Autoscaling == nil || d == nil || d.Spec.Replicas == nil || !ManagesReplicas(d, FieldOwner) {
		return nil
	}
	return appsv1ac.Deployment(d.Name, d.Namespace).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(*d.Spec.Replicas))
}

// ManagesReplicas says whether manager owns a Deployment's spec.replicas through server-side apply.
func ManagesReplicas(d *appsv1.Deployment, manager string) bool {
	for _, f := range d.ManagedFields {
		if f.Manager != manager || f.Operation != metav1.ManagedFieldsOperationApply || f.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &fields) == nil {
			if _, ok := fields.Spec["f:replicas"]; ok {
				return true
			}
		}
	}
	return false
}
