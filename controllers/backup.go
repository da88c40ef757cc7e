package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
)

// maxBackupReport bounds the backup report read from a runtime, a few hundred bytes.
const maxBackupReport = 64 << 10

// BackupPoller copies the state of each SQLite runtime's scheduled backups, which only the runtime knows, into
// the ChatRuntime's status.backup and its LastBackupSucceeded condition: every Interval it reads the report from
// the runtime's metrics listener (never its public port), as the UsagePoller reads usage, and patches the
// ChatRuntimes whose state changed.
type BackupPoller struct {
	runtimePoller
}

// Start polls every Interval until ctx ends.
func (p *BackupPoller) Start(ctx context.Context) error { return pollEvery(ctx, p.Interval, p.poll) }

// poll updates every ChatRuntime's backup status. A runtime that does not answer keeps its last status; one
// whose spec.backup was removed loses it.
func (p *BackupPoller) poll(ctx context.Context) {
	p.eachRuntime(ctx, "backups", func(rt *chatv1alpha1.ChatRuntime) {
		var report *contract.BackupReport
		if takesBackups(rt) {
			r, err := fetchReport[contract.BackupReport](ctx, p.HTTP, p.Address(rt), contract.BackupPath, maxBackupReport)
			if err != nil {
				p.Log.V(1).Info("reading a runtime's backups", "chatRuntime", rt.Name, "error", err.Error())
				return
			}
			report = &r
		}
		after := rt.DeepCopy()
		setBackupStatus(&after.Status, report, rt.Generation)
		if equality.Semantic.DeepEqual(rt.Status, after.Status) {
			return
		}
		// The lock makes a patch from a stale copy fail rather than undo the ChatRuntime reconciler's conditions;
		// the next poll tries again.
		err := p.Client.Status().Patch(ctx, after, client.MergeFromWithOptions(rt, client.MergeFromWithOptimisticLock{}))
		if client.IgnoreNotFound(err) != nil {
			p.Log.V(1).Info("writing a runtime's backup status", "chatRuntime", rt.Name, "error", err.Error())
		}
	})
}

// takesBackups reports whether the runtime takes scheduled backups.
func takesBackups(rt *chatv1alpha1.ChatRuntime) bool {
	return rt.Spec.Backup != nil && rt.Spec.Storage.Type != chatv1alpha1.StoragePostgres
}

// backupScheduleProblem says why the runtime could not run with its backup schedule, or "" when it can or takes
// no backups. The schema checks each cron field's values; this is the runtime's own parse (contract.ParseSchedule),
// which also sees a range that runs backwards and a time zone the zone database does not know.
func backupScheduleProblem(rt *chatv1alpha1.ChatRuntime) string {
	if !takesBackups(rt) {
		return ""
	}
	if _, err := contract.ParseSchedule(render.BackupSchedule(rt.Spec.Backup)); err != nil {
		return fmt.Sprintf("spec.backup.schedule: %v", err)
	}
	return ""
}

// setBackupStatus writes the runtime's report into status: status.backup and the LastBackupSucceeded condition,
// True after a backup that succeeded, False after one that failed, absent before the first. A nil report (no
// spec.backup) removes both.
func setBackupStatus(status *chatv1alpha1.ChatRuntimeStatus, report *contract.BackupReport, generation int64) {
	if report == nil {
		status.Backup = nil
		meta.RemoveStatusCondition(&status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded)
		return
	}
	// The API server keeps times to the second: finer, every poll would differ from what it read back.
	at := func(t time.Time) *metav1.Time {
		if t.IsZero() {
			return nil
		}
		mt := metav1.NewTime(t.Truncate(time.Second))
		return &mt
	}
	b := &chatv1alpha1.BackupStatus{Backups: count(report.Kept), NextBackupTime: at(report.Next), LastError: report.LastError}
	if report.LastFailure != nil {
		b.LastFailureTime = at(*report.LastFailure)
	}
	if l := report.Last; l != nil {
		b.LastBackupTime, b.LastBackupFile, b.LastBackupBytes = at(l.Time), l.Name, l.Size
	}
	status.Backup = b
	cond := metav1.Condition{Type: chatv1alpha1.ConditionLastBackupSucceeded, ObservedGeneration: generation}
	switch {
	case report.LastError != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, chatv1alpha1.ReasonBackupFailed, report.LastError
	case report.Last != nil:
		cond.Status, cond.Reason = metav1.ConditionTrue, chatv1alpha1.ReasonBackupSucceeded
		cond.Message = fmt.Sprintf("%s, %d bytes, taken %s", report.Last.Name, report.Last.Size, report.Last.Time.UTC().Format(time.RFC3339))
	default:
		meta.RemoveStatusCondition(&status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded)
		return
	}
	meta.SetStatusCondition(&status.Conditions, cond)
}
