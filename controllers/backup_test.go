//go:build integration

package controllers

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

func TestSchemaRejectsBadBackups(t *testing.T) {
	claim := func(name string, edit func(*chatv1alpha1.ChatRuntime)) client.Object {
		r := runtimeObj(name)
		r.Spec.Backup = &chatv1alpha1.BackupSpec{ClaimName: "parley-backups"}
		edit(r)
		return r
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
			r.Spec.Backup.Volume = &corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/x"}}
		}), "exactly one of claimName and volume"},
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
			Volume:    &corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/exports/parley"}},
			Retention: chatv1alpha1.BackupRetention{MaxAge: &metav1.Duration{Duration: 720 * time.Hour}}}
		create(t, r)
		if v := r.Spec.Backup.Volume; v == nil || v.NFS == nil || v.NFS.Server != "nfs.example" {
			t.Errorf("the volume source did not survive the API server: %+v", v)
		}
	})
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
	p := &BackupPoller{Client: k8s, Namespace: operatorNS, HTTP: hs.Client(), Log: logr.Discard(),
		Address: func(r *chatv1alpha1.ChatRuntime) string {
			if r.Name != rt.Name {
				return "127.0.0.1:1" // other tests' runtimes answer nothing
			}
			return hs.Listener.Addr().(*net.TCPAddr).String()
		}}
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
	rv := got.ResourceVersion
	p.poll(ctx)
	if again := get(); again.ResourceVersion != rv {
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
