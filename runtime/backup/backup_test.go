package backup_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/backup"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

func TestExpired(t *testing.T) {
	now := time.Date(2026, time.March, 10, 0, 0, 0, 0, time.UTC)
	var files []contract.BackupFile
	for d := 10; d >= 0; d-- { // one a day, oldest first
		at := now.AddDate(0, 0, -d)
		files = append(files, contract.BackupFile{Name: at.Format("0102"), Time: at})
	}
	names := func(fs []contract.BackupFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		files  []contract.BackupFile
		keep   int
		maxAge time.Duration
		want   []string
	}{
		{"keep 3", files, 3, 0, names(files[:8])},
		{"keep more than there are", files, 20, 0, nil},
		{"keep 20, a week", files, 20, 7 * 24 * time.Hour, names(files[:3])},
		{"keep 2, a week", files, 2, 7 * 24 * time.Hour, names(files[:9])},
		{"the newest stays however old", files[:1], 1, time.Hour, nil},
		{"none", nil, 1, time.Hour, nil},
	} {
		if got := names(backup.Expired(tc.files, tc.keep, tc.maxAge, now)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Expired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// database makes a SQLite store's file with some data and returns its path.
func database(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return path
}

func sqliteBackup(src string) backup.Func {
	return func(ctx context.Context, dst string) (int64, error) {
		info, err := sqlite.Backup(ctx, src, dst)
		return info.Size, err
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestSchedulerRetentionAndReport(t *testing.T) {
	ctx := t.Context()
	src := database(t)
	dir := filepath.Join(t.TempDir(), "backups")
	now := time.Date(2026, time.March, 10, 3, 0, 0, 0, time.UTC)
	schedule, err := contract.ParseSchedule("@daily")
	if err != nil {
		t.Fatal(err)
	}
	fn := sqliteBackup(src)
	cfg := backup.Config{Dir: dir, Schedule: schedule, Keep: 3, MaxAge: 0, Logger: discard(),
		Backup: func(ctx context.Context, dst string) (int64, error) { return fn(ctx, dst) }, Now: func() time.Time { return now }}
	s, err := backup.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Report(); r.Last != nil || r.Kept != 0 {
		t.Fatalf("an empty directory's report: %+v", r)
	}
	// Files of someone else's stay, named like ours or not.
	for _, name := range []string{"notes.txt", "parley-latest.db"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if err := s.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(24 * time.Hour)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"notes.txt", "parley-20260312T030000Z.db", "parley-20260313T030000Z.db", "parley-20260314T030000Z.db", "parley-latest.db"}
	if !slices.Equal(got, want) {
		t.Errorf("the directory holds %v, want %v", got, want)
	}
	r := s.Report()
	st, _ := os.Stat(filepath.Join(dir, "parley-20260314T030000Z.db"))
	if r.Kept != 3 || r.Last == nil || r.Last.Name != "parley-20260314T030000Z.db" || r.Last.Size != st.Size() ||
		!r.Last.Time.Equal(time.Date(2026, time.March, 14, 3, 0, 0, 0, time.UTC)) || r.LastError != "" {
		t.Errorf("report: %+v", r)
	}
	if _, err := sqlite.Verify(ctx, filepath.Join(dir, r.Last.Name)); err != nil {
		t.Errorf("the last backup: %v", err)
	}

	// A failure is reported and leaves the last good backup named; the next success clears it.
	fn = func(context.Context, string) (int64, error) { return 0, os.ErrPermission }
	if err := s.RunOnce(ctx); err == nil {
		t.Fatal("a failing backup succeeded")
	}
	r = s.Report()
	if r.LastError != os.ErrPermission.Error() || r.LastFailure == nil || !r.LastFailure.Equal(now) || r.Last.Name != "parley-20260314T030000Z.db" || r.Kept != 3 {
		t.Errorf("report after a failure: %+v", r)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, contract.BackupPath, nil))
	var served contract.BackupReport
	if err := json.Unmarshal(rec.Body.Bytes(), &served); err != nil || served.LastError != r.LastError || served.Last.Name != r.Last.Name {
		t.Errorf("served %s (%v)", rec.Body, err)
	}
	fn = sqliteBackup(src)
	now = now.Add(time.Hour)
	if err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if r := s.Report(); r.LastError != "" || r.LastFailure != nil || r.Kept != 3 {
		t.Errorf("report after a success: %+v", r)
	}

	// A new scheduler (the runtime restarted) reports the backups on disk.
	s2, err := backup.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r2 := s2.Report(); r2.Kept != 3 || r2.Last == nil || r2.Last.Name != s.Report().Last.Name {
		t.Errorf("after a restart: %+v", r2)
	}
}

// every is a schedule of a fixed short interval, shorter than contract.ParseSchedule allows, for a test in real time.
type every time.Duration

func (e every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

func TestRunCatchesUpThenFollowsTheSchedule(t *testing.T) {
	src := database(t)
	dir := t.TempDir()
	// The newest backup is older than the last time the schedule named: the runtime was down then.
	old := filepath.Join(dir, "parley-20200101T000000Z.db")
	if _, err := sqlite.Backup(t.Context(), src, old); err != nil {
		t.Fatal(err)
	}
	s, err := backup.New(backup.Config{Dir: dir, Schedule: every(time.Hour), Keep: 10, Logger: discard(), Backup: sqliteBackup(src)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for s.Report().Kept < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r := s.Report()
	if r.Kept != 2 || !strings.HasPrefix(r.Last.Name, "parley-") || r.Last.Name == filepath.Base(old) {
		t.Fatalf("no catch-up backup at start: %+v", r)
	}
	if until := time.Until(r.Next); until < 50*time.Minute || until > time.Hour {
		t.Errorf("next backup in %v, want an hour after the catch-up", until)
	}
	cancel()
	<-done

	// Now up to date: the next run waits for the schedule.
	s, err = backup.New(backup.Config{Dir: dir, Schedule: every(50 * time.Millisecond), Keep: 10, Logger: discard(), Backup: sqliteBackup(src)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	go s.Run(ctx)
	deadline = time.Now().Add(10 * time.Second)
	for s.Report().Kept < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := s.Report(); r.Kept < 4 {
		t.Errorf("the schedule took no backups: %+v", r)
	}
}

func TestNewRefuses(t *testing.T) {
	schedule, _ := contract.ParseSchedule("@daily")
	ok := backup.Config{Dir: t.TempDir(), Schedule: schedule, Keep: 1, Logger: discard(),
		Backup: func(context.Context, string) (int64, error) { return 0, nil }}
	for name, mutate := range map[string]func(*backup.Config){
		"no dir":       func(c *backup.Config) { c.Dir = "" },
		"no schedule":  func(c *backup.Config) { c.Schedule = nil },
		"keep 0":       func(c *backup.Config) { c.Keep = 0 },
		"negative age": func(c *backup.Config) { c.MaxAge = -time.Hour },
		"no function":  func(c *backup.Config) { c.Backup = nil },
	} {
		c := ok
		mutate(&c)
		if _, err := backup.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := backup.New(ok); err != nil {
		t.Errorf("a good config: %v", err)
	}
}
