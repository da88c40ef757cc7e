package controllers

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

func TestUsageFrom(t *testing.T) {
	at := time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)
	report := contract.UsageReport{MonthStart: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), ObservedAt: at,
		Merchants: map[string]contract.MerchantUsage{"acme": {Conversations: 87, ConversationLimit: 100}, "free": {Conversations: 3}}}
	for _, tc := range []struct {
		merchantID string
		want       *chatv1alpha1.MerchantUsage
	}{
		{"acme", &chatv1alpha1.MerchantUsage{Month: "2026-11", Conversations: 87, ConversationLimit: 100, Summary: "87/100", ObservedTime: metav1.NewTime(at)}},
		{"free", &chatv1alpha1.MerchantUsage{Month: "2026-11", Conversations: 3, Summary: "3", ObservedTime: metav1.NewTime(at)}},
		{"unknown", nil}, // not loaded by the runtime yet: the status keeps what it has
		{"", nil},        // no merchant ID (a conflict): nothing to match
	} {
		got, ok := usageFrom(report, tc.merchantID)
		if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v %v, want %+v", tc.merchantID, got, ok, tc.want)
		}
	}
}

func TestUsageChanged(t *testing.T) {
	u := func(month string, n, limit int32, at int) *chatv1alpha1.MerchantUsage {
		return &chatv1alpha1.MerchantUsage{Month: month, Conversations: n, ConversationLimit: limit,
			ObservedTime: metav1.NewTime(time.Date(2026, 11, 23, at, 0, 0, 0, time.UTC))}
	}
	for _, tc := range []struct {
		name          string
		current, next *chatv1alpha1.MerchantUsage
		want          bool
	}{
		{"first report", nil, u("2026-11", 0, 100, 1), true},
		{"same figures, later", u("2026-11", 5, 100, 1), u("2026-11", 5, 100, 2), false}, // no status churn
		{"a new conversation", u("2026-11", 5, 100, 1), u("2026-11", 6, 100, 2), true},
		{"a new plan", u("2026-11", 5, 100, 1), u("2026-11", 5, 500, 2), true},
		{"a new month", u("2026-11", 0, 100, 1), u("2026-12", 0, 100, 2), true},
	} {
		if got := usageChanged(tc.current, tc.next); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
