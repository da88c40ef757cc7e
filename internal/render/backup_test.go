package render

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// The backup volume is the one spec.backup names, mounted where --backup-dir points, and only on SQLite runtimes.
func TestBackupVolume(t *testing.T) {
	nfs := corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/exports/parley"}}
	csi := corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "smb.csi.k8s.io", VolumeAttributes: map[string]string{"source": "//smb.example/backups"},
		NodePublishSecretRef: &corev1.LocalObjectReference{Name: "smb-credentials"}}}
	directory := corev1.HostPathDirectoryOrCreate
	hostPath := corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/parley-backups", Type: &directory}}
	claim := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "parley-backups"}}
	for _, tc := range []struct {
		name    string
		storage chatv1alpha1.StorageType
		backup  *chatv1alpha1.BackupSpec
		want    *corev1.VolumeSource
	}{
		{"none", chatv1alpha1.StorageSQLite, nil, nil},
		{"a claim", chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{ClaimName: "parley-backups"}, &claim},
		{"an NFS share", chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{Volume: &chatv1alpha1.BackupVolumeSource{NFS: nfs.NFS.DeepCopy()}}, &nfs},
		{"a CSI volume", chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{Volume: &chatv1alpha1.BackupVolumeSource{CSI: csi.CSI.DeepCopy()}}, &csi},
		{"a node's directory", chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{Volume: &chatv1alpha1.BackupVolumeSource{HostPath: hostPath.HostPath.DeepCopy()}}, &hostPath},
		{"postgres", chatv1alpha1.StoragePostgres, &chatv1alpha1.BackupSpec{ClaimName: "parley-backups"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "parley-system"},
				Spec: chatv1alpha1.ChatRuntimeSpec{Storage: chatv1alpha1.StorageSpec{Type: tc.storage}, Backup: tc.backup}}
			raw, err := json.Marshal(RuntimeDeployment(rt, "parley:test"))
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Spec struct {
					Template struct {
						Spec corev1.PodSpec `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			pod := d.Spec.Template.Spec
			var got *corev1.VolumeSource
			for _, v := range pod.Volumes {
				if v.Name == "backup" {
					got = &v.VolumeSource
				}
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("backup volume %+v, want %+v", got, tc.want)
			}
			mounted := false
			for _, m := range pod.Containers[0].VolumeMounts {
				mounted = mounted || (m.Name == "backup" && m.MountPath == backupDir && !m.ReadOnly)
			}
			if mounted != (tc.want != nil) {
				t.Errorf("the backup volume mounted at %s: %v", backupDir, mounted)
			}
		})
	}
}
