package controllers

import (
	"context"
	"errors"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// ready builds a Ready condition.
func ready(generation int64, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{
		Type: chatv1alpha1.ConditionReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: generation,
	}
}

// readyFrom turns the outcome of a reconcile step into a Ready condition: a problem is False with its reason,
// success is True.
func readyFrom(generation int64, p *problem, okMessage string) metav1.Condition {
	if p != nil {
		return ready(generation, metav1.ConditionFalse, p.reason, p.message)
	}
	return ready(generation, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, okMessage)
}

// check runs the steps of a reconcile in order until one reports a problem or fails: the first problem is
// returned to be reported as Ready=False, the first other error to be retried. A step returns nil to go on.
func check(steps ...func() error) (*problem, error) {
	for _, step := range steps {
		if p, err := asProblem(step()); p != nil || err != nil {
			return p, err
		}
	}
	return nil, nil
}

// asProblem splits an error into a problem to report, or an error to retry.
func asProblem(err error) (*problem, error) {
	var p *problem
	if errors.As(err, &p) {
		return p, nil
	}
	return nil, err
}

// Actions of the Events the operator records.
const (
	actionReconcile = "Reconcile"
	actionGenerate  = "Generate"
)

// firstReady says whether an object's first Ready=True is announced as an event.
type firstReady bool

const (
	// announceFirstReady is for the few objects a platform team waits on: a Plan, a ChatRuntime.
	announceFirstReady firstReady = true
	// quietFirstReady is for Merchants, APIKeys and Webhooks, thousands of each: an Event is a write to the API
	// server, and their first Ready says nothing their status does not (a Merchant's Ready condition, its key and
	// webhook counts). Problems and later changes are still announced.
	quietFirstReady firstReady = false
)

// setReady puts cond into conds and records at once the event it announces (readyEvent), a first Ready included:
// for Plans and ChatRuntimes, whose status is written by a merge patch, which no conflict can fail.
func setReady(rec recorder.EventRecorder, obj client.Object, conds *[]metav1.Condition, cond metav1.Condition) {
	putReady(conds, cond, announceFirstReady).record(rec, obj)
}

// readyNews is the event a new Ready condition announces (readyEvent); the zero value announces nothing.
type readyNews struct{ eventType, reason, message string }

// putReady puts cond into conds, with the Reconciling or Stalled condition it implies (progressOf), and returns
// the event it announces, to be recorded once the status is written: a status update that fails on a conflict is
// made again, and would announce the same change twice.
func putReady(conds *[]metav1.Condition, cond metav1.Condition, first firstReady) readyNews {
	before := meta.FindStatusCondition(*conds, chatv1alpha1.ConditionReady)
	meta.SetStatusCondition(conds, cond)
	// Set or removed in place rather than replaced, so that an unchanged one keeps its lastTransitionTime and a
	// reconcile at rest writes nothing.
	implied, ok := progressOf(cond)
	for _, t := range []string{chatv1alpha1.ConditionReconciling, chatv1alpha1.ConditionStalled} {
		if ok && implied.Type == t {
			meta.SetStatusCondition(conds, implied)
		} else {
			meta.RemoveStatusCondition(conds, t)
		}
	}
	if eventType, announce := readyEvent(before, cond, first); announce {
		return readyNews{eventType: eventType, reason: cond.Reason, message: cond.Message}
	}
	return readyNews{}
}

// progressOf is the kstatus condition a Ready condition implies, with its reason, message and generation: none
// when the object is Ready; Stalled when it is not for a reason that needs someone's change, which kstatus (Flux)
// reports as Failed rather than waiting out its timeout; Reconciling otherwise, InProgress. kstatus reads these
// with abnormal-true polarity: each is present only while True.
func progressOf(ready metav1.Condition) (metav1.Condition, bool) {
	cond := metav1.Condition{Status: metav1.ConditionTrue, Reason: ready.Reason, Message: ready.Message,
		ObservedGeneration: ready.ObservedGeneration}
	switch {
	case ready.Status == metav1.ConditionTrue:
		return metav1.Condition{}, false
	case ready.Status == metav1.ConditionFalse && !chatv1alpha1.ReasonResolvesItself(ready.Reason):
		cond.Type = chatv1alpha1.ConditionStalled
	default:
		cond.Type = chatv1alpha1.ConditionReconciling
	}
	return cond, true
}

// record records the event, if any, on obj.
func (n readyNews) record(rec recorder.EventRecorder, obj client.Object) {
	if n.eventType != "" {
		rec.Eventf(obj, nil, n.eventType, n.reason, actionReconcile, "%s", n.message)
	}
}

// readyEvent decides whether a new Ready condition is announced as an event, and of which type: a change of
// status or reason is, Normal when the object is Ready and Warning otherwise; a new message alone is not. A
// first condition is announced when it is a problem, and when it is Ready only if first says so.
func readyEvent(before *metav1.Condition, cond metav1.Condition, first firstReady) (eventType string, announce bool) {
	if before != nil && before.Status == cond.Status && before.Reason == cond.Reason {
		return "", false
	}
	if cond.Status != metav1.ConditionTrue {
		return corev1.EventTypeWarning, true
	}
	if before == nil && !first {
		return "", false
	}
	return corev1.EventTypeNormal, true
}

// count converts a length for a status field, saturating rather than overflowing.
func count(n int) int32 {
	return int32(min(max(n, 0), math.MaxInt32))
}

// patchStatus writes status only when it changed, so that reconciles at rest cost no writes.
func patchStatus[T client.Object](ctx context.Context, c client.Client, before, after T, statusOf func(T) any) error {
	if equality.Semantic.DeepEqual(statusOf(before), statusOf(after)) {
		return nil
	}
	// The lock keeps a patch from a stale cached copy from replacing the conditions another writer (the backup
	// poller) set since: a merge patch replaces the whole list. The caller runs again on a conflict (retryConflict).
	return c.Status().Patch(ctx, after, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// updateStatus writes status only when it changed, as an update of the status subresource at the cached
// resourceVersion: for the objects written once a merchant (Merchants, APIKeys, Webhooks) an update costs the API
// server 5 to 15% less CPU than a merge patch, which it applies to the stored object first (BenchmarkAPIServerCost).
// A conflict says the cache is behind another writer; the caller reconciles again.
func updateStatus[T client.Object](ctx context.Context, c client.Client, before, after T, statusOf func(T) any) error {
	if equality.Semantic.DeepEqual(statusOf(before), statusOf(after)) {
		return nil
	}
	// The cache strips managedFields; one read from a write's response has them. Left out, the API server keeps
	// the stored ones instead of decoding them from the request.
	after.SetManagedFields(nil)
	return c.Status().Update(ctx, after)
}
