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
	// to @daily. The API server checks each field's values; what only a parse sees (a range that runs backwards,
	// an unknown zone) the operator reports as Ready=False, InvalidBackupSchedule, leaving the running runtime as
	// it was.
	// +optional
	// +kubebuilder:default="@daily"
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^((CRON_)?TZ=[^ ]+ )?(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every [^ ]+|[^ @]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+)$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('@every ') || duration(self.substring(self.indexOf('@every ') + 7)) >= duration('1m')",message="backups at most every minute"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+$') || self.matches('^([^ ]+ )?(([*?]|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]*)?(,([*?]|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]*)?)*)( [^ ]+){4}$')",message="the schedule's minute field takes 0-59, *, ranges a-b, lists a,b and steps /n"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+$') || self.matches('^([^ ]+ )?[^ ]+ (([*?]|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]*)?(,([*?]|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]*)?)*)( [^ ]+){3}$')",message="the schedule's hour field takes 0-23, *, ranges a-b, lists a,b and steps /n"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+$') || self.matches('^([^ ]+ )?[^ ]+ [^ ]+ (([*?]|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]*)?(,([*?]|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]*)?)*)( [^ ]+){2}$')",message="the schedule's day-of-month field takes 1-31, *, ranges a-b, lists a,b and steps /n"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+$') || self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ (?i:([*?]|(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]*)?(,([*?]|(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]*)?)*)( [^ ]+){1}$')",message="the schedule's month field takes 1-12 or jan-dec, *, ranges a-b, lists a,b and steps /n"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+$') || self.matches('^([^ ]+ )?[^ ]+ [^ ]+ [^ ]+ [^ ]+ (?i:([*?]|(0?[0-6]|sun|mon|tue|wed|thu|fri|sat)(-(0?[0-6]|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]*)?(,([*?]|(0?[0-6]|sun|mon|tue|wed|thu|fri|sat)(-(0?[0-6]|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]*)?)*)$')",message="the schedule's day-of-week field takes 0-6 or sun-sat, *, ranges a-b, lists a,b and steps /n"
	Schedule string `json:"schedule,omitempty"`

	// ClaimName is a PersistentVolumeClaim in the runtime's namespace (spec.targetNamespace) the backups are
	// written to. With a ReadWriteOnce claim, its volume must be attachable to the node of the runtime's data
	// volume. Exactly one of claimName and volume.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ClaimName string `json:"claimName,omitempty"`

	// Volume is a volume other than a claim the backups are written to: an NFS share, a CSI driver's volume or a
	// directory of the node. Exactly one of claimName and volume.
	// +optional
	Volume *BackupVolumeSource `json:"volume,omitempty"`

	// Retention says which backups the runtime keeps.
	// +optional
	// +kubebuilder:default={}
	Retention BackupRetention `json:"retention,omitempty"`
}

// BackupVolumeSource is where backups are written when not on a PersistentVolumeClaim: exactly one of an NFS
// share, a CSI driver's volume or a directory of the node, each as in a pod's volume (kubectl explain
// pod.spec.volumes.nfs), writable. Sources that do not outlive the pod (emptyDir, ephemeral) or are read-only
// (configMap, secret, image) have no place here; other network storage is reached through its CSI driver.
// +kubebuilder:validation:XValidation:rule="[has(self.nfs), has(self.csi), has(self.hostPath)].filter(x, x).size() == 1",message="volume needs exactly one of nfs, csi and hostPath"
type BackupVolumeSource struct {
	// NFS is a share of an NFS server, writable by user and group 65532.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.readOnly) || !self.readOnly",message="backups need a writable share: readOnly must not be true"
	// +kubebuilder:validation:XValidation:rule="self.server != ''",message="nfs.server must be set"
	// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="nfs.path must be absolute"
	NFS *corev1.NFSVolumeSource `json:"nfs,omitempty"`

	// CSI is a volume of a CSI driver that supports inline (ephemeral) volumes, such as an SMB or object-store
	// driver.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.readOnly) || !self.readOnly",message="backups need a writable volume: readOnly must not be true"
	// +kubebuilder:validation:XValidation:rule="self.driver != ''",message="csi.driver must be set"
	CSI *corev1.CSIVolumeSource `json:"csi,omitempty"`

	// HostPath is a directory of the node the runtime runs on, for a single-node cluster or a node's own backup
	// disk; it holds the backups only as long as that node does.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="hostPath.path must be absolute"
	// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type in ['', 'Directory', 'DirectoryOrCreate']",message="hostPath.type must be Directory or DirectoryOrCreate"
	HostPath *corev1.HostPathVolumeSource `json:"hostPath,omitempty"`
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
