package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupSpec schedules backups of a SQLite runtime's database onto a volume the platform chooses. Each backup is
// a consistent snapshot taken while the runtime serves (SQLite's VACUUM INTO, which holds no lock writers wait
// for), checked (integrity check, schema version) and written under a temporary name before it takes its own,
// parley-<UTC time>.db; the runtime removes older ones by the retention.
// +kubebuilder:validation:XValidation:rule="has(self.claimName) != has(self.volume)",message="backup needs exactly one of claimName and volume"
type BackupSpec struct {
	// Schedule says when backups are taken, as a Kubernetes CronJob's schedule: five cron fields ("0 3 * * *",
	// in UTC unless it starts with CRON_TZ=<zone>), a descriptor (@hourly, @daily, @weekly) or @every <duration>
	// of at least 1m. A runtime that starts after a scheduled time it missed takes a backup at once. Defaults
	// to @daily.
	// +optional
	// +kubebuilder:default="@daily"
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^((CRON_)?TZ=[^ ]+ )?(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every [^ ]+|[^ @]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+)$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('@every ') || duration(self.substring(7)) >= duration('1m')",message="backups at most every minute"
	Schedule string `json:"schedule,omitempty"`

	// ClaimName is a PersistentVolumeClaim in the runtime's namespace (spec.targetNamespace) the backups are
	// written to. With a ReadWriteOnce claim, its volume must be attachable to the node of the runtime's data
	// volume. Exactly one of claimName and volume.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ClaimName string `json:"claimName,omitempty"`

	// Volume is any other writable volume source of a pod the backups are written to, such as an NFS share
	// ({nfs: {server: nfs.example, path: /exports/parley}}) or a CSI volume. Its fields are those of a pod's
	// volume without the name (kubectl explain pod.spec.volumes); they are checked when the operator applies the
	// runtime's Deployment, which a wrong one fails (Ready=False, ApplyFailed), not in this schema, whose size
	// every client of the CRD would otherwise carry. Exactly one of claimName and volume.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Volume *corev1.VolumeSource `json:"volume,omitempty"`

	// Retention says which backups the runtime keeps.
	// +optional
	// +kubebuilder:default={}
	Retention BackupRetention `json:"retention,omitempty"`
}

// BackupRetention says which backups are kept after each new one: the newest keep, of which those older than
// maxAge are removed too. The newest backup is always kept.
type BackupRetention struct {
	// Keep is how many backups are kept, newest first. Defaults to 7.
	// +optional
	// +kubebuilder:default=7
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Keep *int32 `json:"keep,omitempty"`

	// MaxAge removes backups older than it ("720h"), the newest excepted. Unset removes none by age. Backups
	// hold merchants' personal data: a merchant erased from the runtime stays in the backups taken before, until
	// they are removed.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="maxAge must be positive"
	MaxAge *metav1.Duration `json:"maxAge,omitempty"`
}

// BackupStatus is the state of a SQLite runtime's scheduled backups, as the runtime reports it to the operator.
type BackupStatus struct {
	// LastBackupTime is when the snapshot of the newest backup on the volume was taken.
	// +optional
	LastBackupTime *metav1.Time `json:"lastBackupTime,omitempty"`

	// LastBackupFile is the newest backup's file name on the backup volume.
	// +optional
	LastBackupFile string `json:"lastBackupFile,omitempty"`

	// LastBackupBytes is the newest backup's size in bytes.
	// +optional
	LastBackupBytes int64 `json:"lastBackupBytes,omitempty"`

	// Backups is how many backups the volume holds after the retention was applied.
	// +optional
	Backups int32 `json:"backups,omitempty"`

	// LastFailureTime is when the latest backup failed; empty once a later one succeeded.
	// +optional
	LastFailureTime *metav1.Time `json:"lastFailureTime,omitempty"`

	// LastError says why the latest backup failed; empty once a later one succeeded.
	// +optional
	LastError string `json:"lastError,omitempty"`

	// NextBackupTime is when the next backup is due.
	// +optional
	NextBackupTime *metav1.Time `json:"nextBackupTime,omitempty"`
}

// Keeps is Keep, defaulted, for a ChatRuntime stored before the field existed.
func (r BackupRetention) Keeps() int32 {
	if r.Keep == nil {
		return DefaultBackupKeep
	}
	return *r.Keep
}

// DefaultBackupKeep is how many backups are kept unless retention.keep says otherwise.
const DefaultBackupKeep int32 = 7
