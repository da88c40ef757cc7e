package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

func TestSetBackupStatus(t *testing.T) {
	taken := time.Date(2026, time.March, 10, 3, 0, 0, 0, time.UTC)
	failed := taken.Add(24*time.Hour + 1500*time.Millisecond)
	next := taken.Add(48*time.Hour + 250*time.Millisecond)
	last := &contract.BackupFile{Name: "parley-20260310T030000Z.db", Time: taken, Size: 4096}
	ready := metav1.Condition{Type: chatv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: chatv1alpha1.ReasonReconciled}
	for _, tc := range []struct {
		name       string
		report     *contract.BackupReport
		wantBackup *chatv1alpha1.BackupStatus
		wantCond   metav1.ConditionStatus // "" for none
		wantReason string
	}{
		{"no spec.backup", nil, nil, "", ""},
		{"none taken yet", &contract.BackupReport{Next: next}, &chatv1alpha1.BackupStatus{NextBackupTime: mt(next.Truncate(time.Second))}, "", ""},
		{"succeeded", &contract.BackupReport{Last: last, Kept: 3, Next: next},
			&chatv1alpha1.BackupStatus{LastBackupTime: mt(taken), LastBackupFile: last.Name, LastBackupBytes: 4096, Backups: 3,
				NextBackupTime: mt(next.Truncate(time.Second))},
			metav1.ConditionTrue, chatv1alpha1.ReasonBackupSucceeded},
		{"failed after one succeeded", &contract.BackupReport{Last: last, Kept: 3, Next: next, LastFailure: &failed, LastError: "disk full"},
			&chatv1alpha1.BackupStatus{LastBackupTime: mt(taken), LastBackupFile: last.Name, LastBackupBytes: 4096, Backups: 3,
				NextBackupTime: mt(next.Truncate(time.Second)), LastFailureTime: mt(failed.Truncate(time.Second)), LastError: "disk full"},
			metav1.ConditionFalse, chatv1alpha1.ReasonBackupFailed},
		{"failed, none ever", &contract.BackupReport{LastFailure: &failed, LastError: "read-only file system"},
			&chatv1alpha1.BackupStatus{LastFailureTime: mt(failed.Truncate(time.Second)), LastError: "read-only file system"},
			metav1.ConditionFalse, chatv1alpha1.ReasonBackupFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A status that said something else before, with the reconciler's Ready.
			status := chatv1alpha1.ChatRuntimeStatus{Backup: &chatv1alpha1.BackupStatus{LastError: "old"},
				Conditions: []metav1.Condition{ready, {Type: chatv1alpha1.ConditionLastBackupSucceeded, Status: metav1.ConditionUnknown, Reason: "Old"}}}
			setBackupStatus(&status, tc.report, 7)
			if !equalBackup(status.Backup, tc.wantBackup) {
				t.Errorf("status.backup = %+v, want %+v", status.Backup, tc.wantBackup)
			}
			if r := meta.FindStatusCondition(status.Conditions, chatv1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionTrue {
				t.Error("Ready was changed")
			}
			c := meta.FindStatusCondition(status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded)
			switch {
			case tc.wantCond == "" && c != nil:
				t.Errorf("condition %+v, want none", c)
			case tc.wantCond != "" && (c == nil || c.Status != tc.wantCond || c.Reason != tc.wantReason || c.ObservedGeneration != 7 || c.Message == ""):
				t.Errorf("condition %+v, want %s %s", c, tc.wantCond, tc.wantReason)
			}
		})
	}
}

func mt(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

func equalBackup(a, b *chatv1alpha1.BackupStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	eq := func(x, y *metav1.Time) bool { return (x == nil && y == nil) || (x != nil && y != nil && x.Equal(y)) }
	return eq(a.LastBackupTime, b.LastBackupTime) && eq(a.NextBackupTime, b.NextBackupTime) && eq(a.LastFailureTime, b.LastFailureTime) &&
		a.LastBackupFile == b.LastBackupFile && a.LastBackupBytes == b.LastBackupBytes && a.Backups == b.Backups && a.LastError == b.LastError
}
