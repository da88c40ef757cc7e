package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

func TestSourceCondition(t *testing.T) {
	sync := func(state, outcome chatv1alpha1.KnowledgeSourceSyncState, synced int64, err string) *chatv1alpha1.KnowledgeSourceSync {
		return &chatv1alpha1.KnowledgeSourceSync{State: state, LastOutcome: outcome, SyncedGeneration: synced,
			PagesFound: 40, Pages: 12, Items: 30, Error: err}
	}
	cases := []struct {
		name       string
		merchantID string
		sync       *chatv1alpha1.KnowledgeSourceSync
		status     metav1.ConditionStatus
		reason     string
		message    string
	}{
		{"merchant not published", "", nil, metav1.ConditionFalse, chatv1alpha1.ReasonSyncing, "publish"},
		{"no report yet", "acme", nil, metav1.ConditionFalse, chatv1alpha1.ReasonSyncing, "report"},
		{"first sync due", "acme", sync(chatv1alpha1.SyncPending, "", 0, ""), metav1.ConditionFalse, chatv1alpha1.ReasonSyncing, "due"},
		{"first sync running", "acme", sync(chatv1alpha1.SyncSyncing, "", 0, ""), metav1.ConditionFalse, chatv1alpha1.ReasonSyncing, "12 of 40 pages"},
		{"older spec synced", "acme", sync(chatv1alpha1.SyncReady, chatv1alpha1.SyncReady, 1, ""), metav1.ConditionFalse, chatv1alpha1.ReasonSyncing, "due"},
		{"synced", "acme", sync(chatv1alpha1.SyncReady, chatv1alpha1.SyncReady, 2, ""), metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "12 pages into 30 items"},
		{"synced, some pages left out", "acme", sync(chatv1alpha1.SyncReady, chatv1alpha1.SyncReady, 2, "stopped at 12 pages"), metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "stopped at 12 pages"},
		{"re-sync running after a success", "acme", sync(chatv1alpha1.SyncSyncing, chatv1alpha1.SyncReady, 2, ""), metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "items"},
		{"failed", "acme", sync(chatv1alpha1.SyncFailed, chatv1alpha1.SyncFailed, 2, "dial tcp: connection refused"), metav1.ConditionFalse, chatv1alpha1.ReasonSyncFailed, "connection refused"},
		{"re-sync running after a failure", "acme", sync(chatv1alpha1.SyncSyncing, chatv1alpha1.SyncFailed, 2, "dial tcp: connection refused"), metav1.ConditionFalse, chatv1alpha1.ReasonSyncFailed, "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := sourceCondition(2, tc.merchantID, tc.sync)
			if c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) || c.ObservedGeneration != 2 {
				t.Errorf("got %s %s %q, want %s %s with %q", c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.message)
			}
		})
	}
}

// TestSyncStatus: a report is copied whole into status.sync, and one that says nothing new keeps the status as it
// is, its observed time included, so that a source at rest is not written at every report.
func TestSyncStatus(t *testing.T) {
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	synced := at.Add(-time.Minute)
	next := at.Add(24 * time.Hour)
	report := contract.SourceReport{Generation: 3, SyncedGeneration: 3, Status: "ready", LastOutcome: "ready", PagesFound: 9,
		Pages: 8, Items: 20, LastSyncedAt: &synced, NextSyncAt: &next, Error: "one page was too large"}
	got := syncStatus(report, nil, at)
	want := &chatv1alpha1.KnowledgeSourceSync{State: chatv1alpha1.SyncReady, SyncedGeneration: 3, LastOutcome: chatv1alpha1.SyncReady,
		PagesFound: 9, Pages: 8, Items: 20, LastSyncedAt: &metav1.Time{Time: synced}, NextSyncAt: &metav1.Time{Time: next},
		Error: "one page was too large", ObservedTime: metav1.NewTime(at)}
	if !got.LastSyncedAt.Equal(want.LastSyncedAt) || got.State != want.State || got.Items != 20 || got.Error != want.Error ||
		got.LastOutcome != want.LastOutcome || !got.ObservedTime.Equal(&want.ObservedTime) {
		t.Errorf("syncStatus:\n got %+v\nwant %+v", got, want)
	}
	if again := syncStatus(report, got, at.Add(time.Minute)); again != got {
		t.Errorf("an unchanged report replaced the status: %+v", again)
	}
	report.Status = "syncing"
	if moved := syncStatus(report, got, at.Add(time.Minute)); moved == got || moved.State != chatv1alpha1.SyncSyncing ||
		!moved.ObservedTime.Equal(&metav1.Time{Time: at.Add(time.Minute)}) {
		t.Errorf("a changed report: %+v", moved)
	}
	for status, want := range map[string]chatv1alpha1.KnowledgeSourceSyncState{"pending": chatv1alpha1.SyncPending,
		"syncing": chatv1alpha1.SyncSyncing, "ready": chatv1alpha1.SyncReady, "failed": chatv1alpha1.SyncFailed} {
		if got := syncState(status); got != want {
			t.Errorf("syncState(%s) = %s, want %s", status, got, want)
		}
	}
}
