package controllers

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

// maxUsageReport bounds the report read from a runtime: about a hundred bytes a merchant.
const maxUsageReport = 16 << 20

// UsagePoller copies each merchant's usage and keys in use, which only its runtime knows, into the Merchant's
// status, where the APIKey reconciler reads the keys in use, and hands its knowledge sources' syncs to the
// KnowledgeSource reconciler: every Interval it reads each ChatRuntime's report
// from the runtime's metrics listener (never its public port) and patches the Merchants whose figures changed.
type UsagePoller struct {
	runtimePoller
	// Sources receives each merchant's report of its declared knowledge sources; nil drops them.
	Sources *SourceReports
}

// Start polls every Interval until ctx ends.
func (p *UsagePoller) Start(ctx context.Context) error { return pollEvery(ctx, p.Interval, p.poll) }

// poll reads every ChatRuntime's report and updates its Merchants. A runtime that does not answer (not started,
// rolling out) is logged and skipped: its Merchants keep their last usage.
func (p *UsagePoller) poll(ctx context.Context) {
	p.eachRuntime(ctx, "usage", func(rt *chatv1alpha1.ChatRuntime) {
		report, err := fetchReport[contract.UsageReport](ctx, p.HTTP, p.Address(rt), contract.UsagePath, maxUsageReport)
		if err != nil {
			p.Log.V(1).Info("reading a runtime's usage", "chatRuntime", rt.Name, "error", err.Error())
			return
		}
		if err := p.update(ctx, rt, report); err != nil {
			p.Log.Error(err, "writing usage to Merchants", "chatRuntime", rt.Name)
		}
	})
}

// update patches the usage and keys in use of the runtime's Merchants whose figures changed.
func (p *UsagePoller) update(ctx context.Context, rt *chatv1alpha1.ChatRuntime, report contract.UsageReport) error {
	var merchants chatv1alpha1.MerchantList
	if err := p.Client.List(ctx, &merchants, client.MatchingFields{merchantRuntimeIndex: rt.Name}); err != nil {
		return fmt.Errorf("listing the Merchants of ChatRuntime %s: %w", rt.Name, err)
	}
	for i := range merchants.Items {
		m := &merchants.Items[i]
		if p.Sources != nil && m.Status.MerchantID != "" {
			p.Sources.put(ctx, m.Namespace, m.Status.MerchantID, report.Merchants[m.Status.MerchantID].Sources, report.ObservedAt)
		}
		next, ok := usageFrom(report, m.Status.MerchantID)
		keys := keysInUseFrom(report, m.Status.MerchantID)
		if !ok || (!usageChanged(m.Status.Usage, next) && slices.Equal(m.Status.KeysInUse, keys)) {
			continue
		}
		before := m.DeepCopy()
		m.Status.Usage, m.Status.KeysInUse = next, keys
		if err := p.Client.Status().Patch(ctx, m, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("writing the usage of Merchant %s/%s: %w", m.Namespace, m.Name, err)
		}
	}
	return nil
}

// usageFrom is the status.usage the report gives merchantID, or false when the report does not name it (a
// merchant the runtime has not loaded yet, or one without a merchant ID).
func usageFrom(report contract.UsageReport, merchantID string) (*chatv1alpha1.MerchantUsage, bool) {
	u, ok := report.Merchants[merchantID]
	if !ok || merchantID == "" {
		return nil, false
	}
	summary := strconv.Itoa(u.Conversations)
	if u.ConversationLimit > 0 {
		summary += "/" + strconv.Itoa(u.ConversationLimit)
	}
	return &chatv1alpha1.MerchantUsage{Month: report.MonthStart.UTC().Format("2006-01"), Conversations: count(u.Conversations),
		ConversationLimit: count(u.ConversationLimit), Summary: summary, ObservedTime: metav1.NewTime(report.ObservedAt)}, true
}

// keysInUseFrom are the IDs of merchantID's keys the report says the runtime refuses, sorted; none when it names
// none.
func keysInUseFrom(report contract.UsageReport, merchantID string) []string {
	keys := report.Merchants[merchantID].KeysInUse
	if len(keys) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(keys))
}

// usageChanged reports whether next says anything current does not, the time observed aside.
func usageChanged(current, next *chatv1alpha1.MerchantUsage) bool {
	if current == nil {
		return next != nil
	}
	a, b := *current, *next
	a.ObservedTime, b.ObservedTime = metav1.Time{}, metav1.Time{}
	return !equality.Semantic.DeepEqual(a, b)
}
