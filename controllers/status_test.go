package controllers

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

func TestProgressOf(t *testing.T) {
	readyCond := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return ready(3, status, reason, "what the operator says")
	}
	implied := func(condType, reason string) *metav1.Condition {
		return &metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: reason,
			Message: "what the operator says", ObservedGeneration: 3}
	}
	for _, tc := range []struct {
		name  string
		ready metav1.Condition
		want  *metav1.Condition
	}{
		{"Ready", readyCond(metav1.ConditionTrue, chatv1alpha1.ReasonReconciled), nil},
		{"Ready while suspended", readyCond(metav1.ConditionTrue, chatv1alpha1.ReasonSuspended), nil},
		{"a plan not there yet", readyCond(metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotFound),
			implied(chatv1alpha1.ConditionReconciling, chatv1alpha1.ReasonPlanNotFound)},
		{"a Secret not there yet", readyCond(metav1.ConditionFalse, chatv1alpha1.ReasonSecretNotFound),
			implied(chatv1alpha1.ConditionReconciling, chatv1alpha1.ReasonSecretNotFound)},
		{"pods starting", readyCond(metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady),
			implied(chatv1alpha1.ConditionReconciling, chatv1alpha1.ReasonDeploymentNotReady)},
		{"a plan outside the grant", readyCond(metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotAllowed),
			implied(chatv1alpha1.ConditionStalled, chatv1alpha1.ReasonPlanNotAllowed)},
		{"an expired key", readyCond(metav1.ConditionFalse, chatv1alpha1.ReasonExpired),
			implied(chatv1alpha1.ConditionStalled, chatv1alpha1.ReasonExpired)},
		{"a reason added later needs someone", readyCond(metav1.ConditionFalse, "SomethingNew"),
			implied(chatv1alpha1.ConditionStalled, "SomethingNew")},
		{"Ready=Unknown", readyCond(metav1.ConditionUnknown, "Checking"),
			implied(chatv1alpha1.ConditionReconciling, "Checking")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := progressOf(tc.ready)
			switch {
			case tc.want == nil && ok:
				t.Errorf("progressOf = %+v, want none", got)
			case tc.want != nil && (!ok || got != *tc.want):
				t.Errorf("progressOf = (%+v, %v), want %+v", got, ok, *tc.want)
			}
		})
	}
}

// TestPutReadyProgress: the condition Ready implies replaces the other, goes with Ready=True, and stays as it was,
// lastTransitionTime included, while Ready does not change, so that a reconcile at rest writes no status.
func TestPutReadyProgress(t *testing.T) {
	past := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	conds := []metav1.Condition{{Type: chatv1alpha1.ConditionIsolated, Status: metav1.ConditionFalse,
		Reason: chatv1alpha1.ReasonSharesNamespace, LastTransitionTime: past}}
	only := func(step, present, absent string) {
		t.Helper()
		if c := meta.FindStatusCondition(conds, present); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("%s: %s is %+v, want True", step, present, c)
		}
		if c := meta.FindStatusCondition(conds, absent); c != nil {
			t.Errorf("%s: %s is %+v, want absent", step, absent, c)
		}
	}

	putReady(&conds, ready(1, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotFound, "no plan"), announceFirstReady)
	only("plan not there yet", chatv1alpha1.ConditionReconciling, chatv1alpha1.ConditionStalled)

	putReady(&conds, ready(2, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotAllowed, "not granted"), announceFirstReady)
	only("plan outside the grant", chatv1alpha1.ConditionStalled, chatv1alpha1.ConditionReconciling)

	meta.FindStatusCondition(conds, chatv1alpha1.ConditionStalled).LastTransitionTime = past
	before := append([]metav1.Condition(nil), conds...)
	putReady(&conds, ready(2, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotAllowed, "not granted"), announceFirstReady)
	if !slices.Equal(before, conds) {
		t.Errorf("a reconcile at rest changed the conditions:\n%+v\nwant\n%+v", conds, before)
	}

	putReady(&conds, ready(3, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "ok"), announceFirstReady)
	for _, condType := range []string{chatv1alpha1.ConditionReconciling, chatv1alpha1.ConditionStalled} {
		if c := meta.FindStatusCondition(conds, condType); c != nil {
			t.Errorf("Ready: %s is %+v, want absent", condType, c)
		}
	}
	if c := meta.FindStatusCondition(conds, chatv1alpha1.ConditionIsolated); c == nil || c.LastTransitionTime != past {
		t.Errorf("Isolated is %+v, want it left as it was", c)
	}
}
