package controllers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

// KnowledgeSourceReconciler reports each KnowledgeSource's syncs, as its merchant's runtime last reported them
// (SourceReports), and decides its Ready condition. The Merchant reconciler puts the sources into the bundle.
type KnowledgeSourceReconciler struct {
	client.Client
	// APIReader tells a Merchant missing from the cache from one whose event has not reached it yet.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Reports are the runtimes' last reports of the declared sources, which the usage poller keeps.
	Reports *SourceReports
	writes  *ownWrites
	Now     func() time.Time
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=knowledgesources,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=knowledgesources/status,verbs=get;update;patch

// Reconcile loads a KnowledgeSource and its Merchant, copies the runtime's report of its syncs and reports Ready.
func (r *KnowledgeSourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ks chatv1alpha1.KnowledgeSource
	if done, err := load(ctx, r.Client, req, &ks); done {
		return ctrl.Result{}, err
	}
	if r.writes.heldBack(&ks) {
		return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
	}
	// The merchantRef resolves in the source's own namespace only: a source cannot name another tenant's
	// Merchant, whose bundle it would otherwise join.
	m, retry, merchantErr := merchantOfReferrer(ctx, r.Client, r.APIReader, ks.Namespace, ks.Spec.MerchantRef,
		ks.CreationTimestamp.Time, r.Now())
	if errors.Is(merchantErr, errCacheBehind) {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	before := ks.DeepCopy()
	p, err := check(func() error { return merchantErr })
	if err != nil {
		return ctrl.Result{}, err
	}
	cond := readyFrom(ks.Generation, p, "")
	if p == nil {
		ks.Status.MerchantID = m.Status.MerchantID
		if report, at, ok := r.Reports.Get(m.Status.MerchantID, ks.Name); ok {
			ks.Status.Sync = syncStatus(report, ks.Status.Sync, at)
		}
		cond = sourceCondition(ks.Generation, m.Status.MerchantID, ks.Status.Sync)
	}
	ks.Status.ObservedGeneration = ks.Generation
	news := putReady(&ks.Status.Conditions, cond, quietFirstReady)
	statusOf := func(k *chatv1alpha1.KnowledgeSource) any { return k.Status }
	return reportStatus(ctx, r.Client, r.writes, r.Recorder, before, &ks, statusOf, news, ctrl.Result{})
}

// syncStatus is status.sync from a runtime's report, observed at; current is kept as it is when the report says
// nothing new, so that an unchanged source is not written at every report.
func syncStatus(report contract.SourceReport, current *chatv1alpha1.KnowledgeSourceSync, at time.Time) *chatv1alpha1.KnowledgeSourceSync {
	next := &chatv1alpha1.KnowledgeSourceSync{State: syncState(report.Status), SyncedGeneration: report.SyncedGeneration,
		LastOutcome: lastOutcome(report.LastOutcome), PagesFound: count(report.PagesFound), Pages: count(report.Pages),
		Items: count(report.Items), Error: report.Error, ObservedTime: metav1.NewTime(at)}
	if report.LastSyncedAt != nil {
		t := metav1.NewTime(*report.LastSyncedAt)
		next.LastSyncedAt = &t
	}
	if report.NextSyncAt != nil {
		t := metav1.NewTime(*report.NextSyncAt)
		next.NextSyncAt = &t
	}
	if current != nil {
		a := *current
		a.ObservedTime = next.ObservedTime
		if reflect.DeepEqual(&a, next) {
			return current
		}
	}
	return next
}

// syncState is the status.sync state of the runtime's status of a source.
func syncState(status string) chatv1alpha1.KnowledgeSourceSyncState {
	switch status {
	case "syncing":
		return chatv1alpha1.SyncSyncing
	case "ready":
		return chatv1alpha1.SyncReady
	case "failed":
		return chatv1alpha1.SyncFailed
	}
	return chatv1alpha1.SyncPending
}

// lastOutcome is the status.sync lastOutcome of the runtime's outcome of a source's last sync; empty before one.
func lastOutcome(outcome string) chatv1alpha1.KnowledgeSourceSyncState {
	if outcome == "" {
		return ""
	}
	return syncState(outcome)
}

// sourceCondition decides a KnowledgeSource's Ready condition from its runtime's report of its syncs: True once a
// sync of this generation succeeded (a later sync running keeps it), False with the runtime's error once it
// failed, and False with reason Syncing until the runtime has finished one (the bundle on its way, the sync due
// or running), which kstatus and Argo CD show as in progress.
func sourceCondition(generation int64, merchantID string, s *chatv1alpha1.KnowledgeSourceSync) metav1.Condition {
	switch {
	case merchantID == "":
		return ready(generation, metav1.ConditionFalse, chatv1alpha1.ReasonSyncing,
			"waiting for the Merchant to publish its tenant bundle")
	case s == nil:
		return ready(generation, metav1.ConditionFalse, chatv1alpha1.ReasonSyncing,
			"waiting for the runtime to report the source")
	case s.SyncedGeneration < generation || s.LastOutcome == "":
		msg := "the runtime's first sync of this spec is due"
		if s.State == chatv1alpha1.SyncSyncing {
			msg = fmt.Sprintf("the runtime's first sync of this spec is running: %d of %d pages read", s.Pages, s.PagesFound)
		}
		return ready(generation, metav1.ConditionFalse, chatv1alpha1.ReasonSyncing, msg)
	case s.LastOutcome == chatv1alpha1.SyncFailed:
		return ready(generation, metav1.ConditionFalse, chatv1alpha1.ReasonSyncFailed, s.Error)
	}
	msg := fmt.Sprintf("synced %d pages into %d items", s.Pages, s.Items)
	if s.Error != "" {
		msg += "; " + s.Error
	}
	return ready(generation, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, msg)
}

// SetupWithManager watches KnowledgeSources, their Merchants and the runtimes' reports of their syncs.
func (r *KnowledgeSourceReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.writes = newOwnWrites()
	return ctrl.NewControllerManagedBy(mgr).
		For(&chatv1alpha1.KnowledgeSource{}, notStatusOnly()).
		Watches(&chatv1alpha1.KnowledgeSource{}, r.writes.forget()).
		// A Merchant's status carries its merchant ID, which a new source waits for.
		Watches(&chatv1alpha1.Merchant{}, enqueueReferrers(r.Client, &chatv1alpha1.KnowledgeSourceList{}, sourceMerchantIndex)).
		WatchesRawSource(source.Channel(r.Reports.events, &handler.TypedEnqueueRequestForObject[*chatv1alpha1.KnowledgeSource]{})).
		WithOptions(controllerOptions(workers)).
		Named("knowledgesource").
		Complete(r)
}

// SourceReports are the runtimes' last reports of their merchants' declared sources, by merchant ID and source
// ID, kept by the usage poller for the KnowledgeSource reconciler, which a changed report wakes.
type SourceReports struct {
	mu     sync.Mutex
	by     map[string]map[string]contract.SourceReport
	at     map[string]time.Time
	events chan event.TypedGenericEvent[*chatv1alpha1.KnowledgeSource]
}

// NewSourceReports makes an empty store of reports.
func NewSourceReports() *SourceReports {
	return &SourceReports{by: map[string]map[string]contract.SourceReport{}, at: map[string]time.Time{},
		events: make(chan event.TypedGenericEvent[*chatv1alpha1.KnowledgeSource], 1024)}
}

// Get returns the last report of a merchant's source and when it was observed.
func (s *SourceReports) Get(merchantID, sourceID string) (contract.SourceReport, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.by[merchantID][sourceID]
	return r, s.at[merchantID], ok
}

// put records a merchant's report, observed at, and wakes the reconciles of its sources in namespace whose
// report changed.
func (s *SourceReports) put(ctx context.Context, namespace, merchantID string, reports map[string]contract.SourceReport, at time.Time) {
	s.mu.Lock()
	old := s.by[merchantID]
	changed := make([]string, 0)
	for id, r := range reports {
		if o, ok := old[id]; !ok || !reflect.DeepEqual(o, r) {
			changed = append(changed, id)
		}
	}
	if len(reports) == 0 {
		delete(s.by, merchantID)
		delete(s.at, merchantID)
	} else {
		s.by[merchantID], s.at[merchantID] = maps.Clone(reports), at
	}
	s.mu.Unlock()
	for _, id := range changed {
		ks := &chatv1alpha1.KnowledgeSource{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: id}}
		select {
		case s.events <- event.TypedGenericEvent[*chatv1alpha1.KnowledgeSource]{Object: ks}:
		case <-ctx.Done():
			return
		}
	}
}
