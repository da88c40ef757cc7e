package render

import (
	"encoding/json"
	"strconv"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

// backupDir is where a SQLite runtime's backup volume is mounted.
const backupDir = "/var/lib/parley-backups"

// backupSpec is the runtime's backup settings, or nil when it takes none: spec.backup on a SQLite runtime.
func backupSpec(rt *chatv1alpha1.ChatRuntime) *chatv1alpha1.BackupSpec {
	if rt.Spec.Storage.Type == chatv1alpha1.StoragePostgres {
		return nil
	}
	return rt.Spec.Backup
}

// backupArgs are the runtime's --backup-* arguments; none without backups.
func backupArgs(rt *chatv1alpha1.ChatRuntime) []string {
	b := backupSpec(rt)
	if b == nil {
		return nil
	}
	args := []string{contract.Arg(contract.FlagBackupDir, backupDir), contract.Arg(contract.FlagBackupSchedule, BackupSchedule(b)),
		contract.Arg(contract.FlagBackupKeep, strconv.Itoa(int(b.Retention.Keeps())))}
	if a := b.Retention.MaxAge; a != nil {
		args = append(args, contract.Arg(contract.FlagBackupMaxAge, a.Duration.String()))
	}
	return args
}

// BackupSchedule is the schedule the runtime is given: spec.backup.schedule, or the runtime's default where the
// API server has not defaulted it (an object stored before the field had a default).
func BackupSchedule(b *chatv1alpha1.BackupSpec) string {
	if b.Schedule == "" {
		return contract.DefaultBackupSchedule
	}
	return b.Schedule
}

// backupVolume is the pod's volume the backups are written to, or nil without backups.
func backupVolume(rt *chatv1alpha1.ChatRuntime) *corev1ac.VolumeApplyConfiguration {
	b := backupSpec(rt)
	if b == nil {
		return nil
	}
	v := corev1ac.Volume().WithName("backup")
	if b.ClaimName != "" {
		return v.WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(b.ClaimName))
	}
	if b.Volume != nil {
		// The backup volume's sources are a pod's, with the same JSON form as a pod volume's apply
		// configuration; neither step can fail on a value of the type.
		raw, _ := json.Marshal(b.Volume)
		_ = json.Unmarshal(raw, &v.VolumeSourceApplyConfiguration)
	}
	return v
}
