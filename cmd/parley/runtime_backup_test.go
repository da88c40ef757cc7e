//go:build integration

package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// TestRuntimeBacksUp runs `parley runtime` with --backup-dir: it takes a first backup at start, reports it on the
// metrics listener only, and a restore is refused while it runs.
func TestRuntimeBacksUp(t *testing.T) {
	dir := t.TempDir()
	data, backups := filepath.Join(dir, "data", "parley.db"), filepath.Join(dir, "backups")
	public, metrics, stop := startRuntime(t, "--sqlite-path", data, "--backup-dir", backups, "--backup-schedule", "@every 1h",
		"--backup-keep", "3")
	defer stop()

	var report contract.BackupReport
	deadline := time.Now().Add(20 * time.Second)
	for report.Last == nil && time.Now().Before(deadline) {
		r := get(t, "http://"+metrics+contract.BackupPath, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", contract.BackupPath, r.status, r.body)
		}
		if err := json.Unmarshal([]byte(r.body), &report); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if report.Last == nil || report.Kept != 1 || report.LastError != "" || time.Until(report.Next) < 59*time.Minute {
		t.Fatalf("report: %+v", report)
	}
	info, err := sqlite.Verify(t.Context(), filepath.Join(backups, report.Last.Name))
	if err != nil || info.Size != report.Last.Size {
		t.Errorf("the reported backup: %+v, %v", info, err)
	}
	if r := get(t, "http://"+metrics+"/metrics", nil); !strings.Contains(r.body, "parley_runtime_backup_last_size_bytes") {
		t.Errorf("no backup metrics: %s", r.body)
	}
	if r := get(t, "http://"+public+contract.BackupPath, nil); r.status != http.StatusNotFound {
		t.Errorf("the public port serves %s: %d", contract.BackupPath, r.status)
	}
	if _, err := sqlite.Restore(t.Context(), filepath.Join(backups, report.Last.Name), data, time.Now()); !errors.Is(err, sqlite.ErrInUse) {
		t.Errorf("restore under the running runtime: %v", err)
	}
}

// Without --backup-dir the runtime takes no backups and serves no report.
func TestRuntimeWithoutBackups(t *testing.T) {
	_, metrics, stop := startRuntime(t)
	defer stop()
	if r := get(t, "http://"+metrics+contract.BackupPath, nil); r.status != http.StatusNotFound {
		t.Errorf("GET %s without backups: %d", contract.BackupPath, r.status)
	}
}
