//go:build integration

package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
)

func TestSchemaRejectsBadBackups(t *testing.T) {
	claim := func(name string, edit func(*chatv1alpha1.ChatRuntime)) client.Object {
		r := runtimeObj(name)
		r.Spec.Backup = &chatv1alpha1.BackupSpec{ClaimName: "parley-backups"}
		edit(r)
		return r
	}
	volume := func(name string, v chatv1alpha1.BackupVolumeSource) client.Object {
		return claim(name, func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup.ClaimName, r.Spec.Backup.Volume = "", &v })
	}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want string
	}{
		{"backups of postgres", claim("bad-backup-pg", func(r *chatv1alpha1.ChatRuntime) {
			r.Spec.Storage = chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
				Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "pg"}}}
		}), "backup takes backups of sqlite storage"},
		{"no volume", claim("bad-backup-none", func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup.ClaimName = "" }),
			"exactly one of claimName and volume"},
		{"two volumes", claim("bad-backup-two", func(r *chatv1alpha1.ChatRuntime) {
			r.Spec.Backup.Volume = &chatv1alpha1.BackupVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/x"}}
		}), "exactly one of claimName and volume"},
		{"an empty volume", volume("bad-backup-empty", chatv1alpha1.BackupVolumeSource{}), "exactly one of nfs, csi and hostPath"},
		{"two sources", volume("bad-backup-sources", chatv1alpha1.BackupVolumeSource{
			NFS:      &corev1.NFSVolumeSource{Server: "nfs", Path: "/x"},
			HostPath: &corev1.HostPathVolumeSource{Path: "/srv/backups"}}), "exactly one of nfs, csi and hostPath"},
		{"a read-only share", volume("bad-backup-ro", chatv1alpha1.BackupVolumeSource{
			NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/x", ReadOnly: true}}), "backups need a writable share"},
		{"a share without a server", volume("bad-backup-server", chatv1alpha1.BackupVolumeSource{
			NFS: &corev1.NFSVolumeSource{Path: "/x"}}), "nfs.server must be set"},
		{"a relative share", volume("bad-backup-relative", chatv1alpha1.BackupVolumeSource{
			NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "exports"}}), "nfs.path must be absolute"},
		{"a read-only CSI volume", volume("bad-backup-csi-ro", chatv1alpha1.BackupVolumeSource{
			CSI: &corev1.CSIVolumeSource{Driver: "smb.csi.k8s.io", ReadOnly: new(true)}}), "backups need a writable volume"},
		{"a CSI volume without a driver", volume("bad-backup-csi", chatv1alpha1.BackupVolumeSource{
			CSI: &corev1.CSIVolumeSource{}}), "csi.driver must be set"},
		{"a node's file", volume("bad-backup-file", chatv1alpha1.BackupVolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/srv/backups", Type: new(corev1.HostPathFile)}}), "hostPath.type must be Directory"},
		{"a schedule that is no schedule", claim("bad-backup-words", func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup.Schedule = "every night" }),
			"spec.backup.schedule"},
		{"backups too often", claim("bad-backup-often", func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup.Schedule = "@every 10s" }),
			"backups at most every minute"},
		{"keep none", claim("bad-backup-keep", func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup.Retention.Keep = new(int32(0)) }),
			"spec.backup.retention.keep"},
		{"a negative age", claim("bad-backup-age", func(r *chatv1alpha1.ChatRuntime) {
			r.Spec.Backup.Retention.MaxAge = &metav1.Duration{Duration: -time.Hour}
		}), "maxAge must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := k8s.Create(ctxT(t), tc.obj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error mentioning %q, got %v", tc.want, err)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		r := claim("backup-defaults", func(*chatv1alpha1.ChatRuntime) {})
		create(t, r)
		b := r.(*chatv1alpha1.ChatRuntime).Spec.Backup
		if b.Schedule != "@daily" || b.Retention.Keep == nil || *b.Retention.Keep != 7 || b.Retention.MaxAge != nil {
			t.Errorf("backup defaults: %+v", b)
		}
	})
	t.Run("a cron schedule in a time zone and a volume source", func(t *testing.T) {
		r := runtimeObj("backup-nfs")
		r.Spec.Backup = &chatv1alpha1.BackupSpec{Schedule: "CRON_TZ=Europe/Berlin 30 2 * * *",
			Volume:    &chatv1alpha1.BackupVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/exports/parley"}},
			Retention: chatv1alpha1.BackupRetention{MaxAge: &metav1.Duration{Duration: 720 * time.Hour}}}
		create(t, r)
		if v := r.Spec.Backup.Volume; v == nil || v.NFS == nil || v.NFS.Server != "nfs.example" {
			t.Errorf("the volume source did not survive the API server: %+v", v)
		}
	})
	t.Run("a CSI volume and a node's directory", func(t *testing.T) {
		for name, v := range map[string]chatv1alpha1.BackupVolumeSource{
			"backup-csi": {CSI: &corev1.CSIVolumeSource{Driver: "smb.csi.k8s.io",
				VolumeAttributes: map[string]string{"source": "//smb.example/backups"}, NodePublishSecretRef: &corev1.LocalObjectReference{Name: "smb"}}},
			"backup-node": {HostPath: &corev1.HostPathVolumeSource{Path: "/srv/parley-backups", Type: new(corev1.HostPathDirectoryOrCreate)}},
		} {
			create(t, volume(name, v))
		}
	})
}

// Every schedule of backupSchedules meets its fate on a real API server and operator: the schema refuses what it
// can see is wrong, with the field's message; a schedule it admits that the runtime could not run leaves the
// runtime unapplied with Ready=False, InvalidBackupSchedule, until it is changed.
func TestBackupScheduleAdmission(t *testing.T) {
	for i, tc := range backupSchedules {
		t.Run(tc.schedule, func(t *testing.T) {
			r := runtimeObj(fmt.Sprintf("backup-schedule-%d", i))
			r.Spec.Backup = &chatv1alpha1.BackupSpec{Schedule: tc.schedule, ClaimName: "parley-backups"}
			err := k8s.Create(ctxT(t), r)
			if !tc.admitted {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.backup.schedule") {
					t.Fatalf("admitted, or refused for another reason: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			t.Cleanup(func() { _ = k8s.Delete(context.WithoutCancel(ctxT(t)), r) })
			if tc.run {
				return // applied as any runtime: the contract test runs the runtime with such schedules
			}
			waitReady(t, r, metav1.ConditionFalse, chatv1alpha1.ReasonInvalidBackupSchedule)
			c := meta.FindStatusCondition(r.Status.Conditions, chatv1alpha1.ConditionReady)
			if !strings.Contains(c.Message, "spec.backup.schedule") {
				t.Errorf("the condition does not say what to change: %q", c.Message)
			}
			if s := meta.FindStatusCondition(r.Status.Conditions, chatv1alpha1.ConditionStalled); s == nil || s.Status != metav1.ConditionTrue {
				t.Errorf("Stalled %+v, want True: the schedule needs someone's change", s)
			}
			var d appsv1.Deployment
			err = k8s.Get(ctxT(t), client.ObjectKey{Namespace: r.Namespace, Name: render.ServiceName(r)}, &d)
			if !apierrors.IsNotFound(err) {
				t.Fatalf("a Deployment for a schedule the runtime cannot run: %v", err)
			}

			update(t, r, func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup.Schedule = "0 3 * * *" })
			waitReady(t, r, metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady)
			if err := k8s.Get(ctxT(t), client.ObjectKey{Namespace: r.Namespace, Name: render.ServiceName(r)}, &d); err != nil {
				t.Fatalf("no Deployment once the schedule was mended: %v", err)
			}
		})
	}
}

// reportServer serves the backup report the test sets, as a runtime's metrics listener does.
type reportServer struct {
	mu     sync.Mutex
	report *contract.BackupReport // nil answers 404, as a runtime without backups
}

func (s *reportServer) set(r *contract.BackupReport) { s.mu.Lock(); s.report = r; s.mu.Unlock() }

func (s *reportServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Path != contract.BackupPath || s.report == nil {
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(s.report)
}

// The poller copies a runtime's backup report into its ChatRuntime on a real API server: the last backup and a
// True condition, then a failure and a False one, and nothing once spec.backup is removed; the reconciler's
// Ready stays.
func TestBackupPollerWritesStatus(t *testing.T) {
	ctx := ctxT(t)
	srv := &reportServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	rt := runtimeObj("backed-up")
	rt.Spec.Backup = &chatv1alpha1.BackupSpec{ClaimName: "parley-backups"}
	create(t, rt)
	// The poller's own status writes are counted: the reconciler may write the ChatRuntime too (its outage's
	// length), more so while it catches up with other tests' runtimes.
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int32
	pollerClient := interceptor.NewClient(direct, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if obj.GetName() == rt.Name {
				writes.Add(1)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	p := &BackupPoller{runtimePoller{Client: pollerClient, Namespace: operatorNS, HTTP: hs.Client(), Log: logr.Discard(),
		Address: func(r *chatv1alpha1.ChatRuntime) string {
			if r.Name != rt.Name {
				return "127.0.0.1:1" // other tests' runtimes answer nothing
			}
			return hs.Listener.Addr().(*net.TCPAddr).String()
		}}}
	get := func() *chatv1alpha1.ChatRuntime {
		t.Helper()
		var got chatv1alpha1.ChatRuntime
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), &got); err != nil {
			t.Fatal(err)
		}
		return &got
	}
	// pollUntil polls until check passes: the reconciler may write the status between a poll's read and patch,
	// which the poller's optimistic lock refuses until the next poll.
	pollUntil := func(what string, check func(*chatv1alpha1.ChatRuntime) bool) *chatv1alpha1.ChatRuntime {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			p.poll(ctx)
			got := get()
			if check(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: status %+v", what, got.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	deadline := time.Now().Add(20 * time.Second)
	for meta.FindStatusCondition(get().Status.Conditions, chatv1alpha1.ConditionReady) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the reconciler reported no Ready")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Not rolled out yet: no report, no status.
	p.poll(ctx)
	if got := get(); got.Status.Backup != nil {
		t.Fatalf("a status before any report: %+v", got.Status.Backup)
	}

	taken := time.Date(2026, time.March, 10, 3, 0, 0, 0, time.UTC)
	srv.set(&contract.BackupReport{Last: &contract.BackupFile{Name: "parley-20260310T030000Z.db", Time: taken, Size: 8192}, Kept: 2,
		Next: taken.Add(24 * time.Hour)})
	got := pollUntil("after a backup", func(r *chatv1alpha1.ChatRuntime) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded)
		return r.Status.Backup != nil && c != nil && c.Status == metav1.ConditionTrue
	})
	if b := got.Status.Backup; b.LastBackupFile != "parley-20260310T030000Z.db" || b.LastBackupBytes != 8192 || b.Backups != 2 ||
		!b.LastBackupTime.Time.Equal(taken) || !b.NextBackupTime.Time.Equal(taken.Add(24*time.Hour)) {
		t.Errorf("status.backup %+v", b)
	}
	// Nothing new: no write.
	before := writes.Load()
	p.poll(ctx)
	if writes.Load() != before {
		t.Errorf("a poll that found nothing new wrote the ChatRuntime")
	}

	failed := taken.Add(24 * time.Hour)
	srv.set(&contract.BackupReport{Last: &contract.BackupFile{Name: "parley-20260310T030000Z.db", Time: taken, Size: 8192}, Kept: 2,
		Next: taken.Add(48 * time.Hour), LastFailure: &failed, LastError: "writing /var/lib/parley-backups: no space left on device"})
	got = pollUntil("after a failure", func(r *chatv1alpha1.ChatRuntime) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded)
		return c != nil && c.Status == metav1.ConditionFalse
	})
	c := meta.FindStatusCondition(got.Status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded)
	if c.Reason != chatv1alpha1.ReasonBackupFailed || !strings.Contains(c.Message, "no space left") || got.Status.Backup.LastError != c.Message {
		t.Errorf("condition %+v, status.backup %+v", c, got.Status.Backup)
	}
	if r := meta.FindStatusCondition(got.Status.Conditions, chatv1alpha1.ConditionReady); r == nil {
		t.Error("the poller removed the reconciler's Ready")
	}

	update(t, got, func(r *chatv1alpha1.ChatRuntime) { r.Spec.Backup = nil })
	pollUntil("after spec.backup was removed", func(r *chatv1alpha1.ChatRuntime) bool {
		return r.Spec.Backup == nil && r.Status.Backup == nil &&
			meta.FindStatusCondition(r.Status.Conditions, chatv1alpha1.ConditionLastBackupSucceeded) == nil
	})
}
