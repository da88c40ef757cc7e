// Package backup takes a SQLite runtime's scheduled backups: a checked copy of the database into a directory on
// a schedule, with retention, and a report of the last one for the operator.
package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"

	"github.com/parley-dev/parley/internal/contract"
)

// Func writes a checked backup of the database to the file dst and returns its size in bytes.
type Func func(ctx context.Context, dst string) (size int64, err error)

// Config wires a Scheduler.
type Config struct {
	// Dir is the directory the backups are written to; the scheduler owns the files named parley-*.db there.
	Dir string
	// Schedule says when backups are taken (contract.ParseSchedule).
	Schedule cron.Schedule
	// Keep is how many backups are kept, newest first; at least 1.
	Keep int
	// MaxAge, when positive, removes backups older than it; the newest is always kept.
	MaxAge time.Duration
	// Backup writes one backup.
	Backup Func
	Logger *slog.Logger
	// Registry receives the backups' metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Scheduler takes the backups at the times of its schedule, applies the retention, and reports the last one.
type Scheduler struct {
	cfg      Config
	lastTime prometheus.Gauge
	lastSize prometheus.Gauge
	failures prometheus.Counter
	mu       sync.Mutex
	report   contract.BackupReport
}

// New builds a Scheduler; its report starts from the backups already in the directory.
func New(cfg Config) (*Scheduler, error) {
	switch {
	case cfg.Dir == "" || cfg.Schedule == nil || cfg.Backup == nil || cfg.Logger == nil:
		return nil, errors.New("backup: the scheduler needs a directory, a schedule, a backup function and a logger")
	case cfg.Keep < 1:
		return nil, errors.New("backup: keep at least one backup")
	case cfg.MaxAge < 0:
		return nil, errors.New("backup: the maximum age must not be negative")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Scheduler{cfg: cfg,
		lastTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "parley_runtime_backup_last_success_timestamp_seconds",
			Help: "When the snapshot of the newest backup in the backup directory was taken (unix seconds)."}),
		lastSize: prometheus.NewGauge(prometheus.GaugeOpts{Name: "parley_runtime_backup_last_size_bytes",
			Help: "The size of the newest backup in the backup directory."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "parley_runtime_backup_failures_total",
			Help: "Scheduled backups that failed."}),
	}
	if cfg.Registry != nil {
		for _, c := range []prometheus.Collector{s.lastTime, s.lastSize, s.failures} {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("backup: registering metrics: %w", err)
			}
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("backup: creating %s: %w", cfg.Dir, err)
	}
	files, err := s.list()
	if err != nil {
		return nil, err
	}
	s.setKept(files)
	return s, nil
}

// Run takes backups until ctx ends: at once when the directory has none or the newest is older than the last
// time the schedule named (the runtime was down then), and at each time the schedule names after that.
func (s *Scheduler) Run(ctx context.Context) {
	now := s.cfg.Now()
	last := s.Report().Last
	due := now
	if last != nil && !s.cfg.Schedule.Next(last.Time).Before(now) {
		due = s.cfg.Schedule.Next(now)
	}
	for {
		s.mu.Lock()
		s.report.Next = due
		s.mu.Unlock()
		t := time.NewTimer(due.Sub(s.cfg.Now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		_ = s.RunOnce(ctx) // reported and logged
		due = s.cfg.Schedule.Next(s.cfg.Now())
	}
}

// RunOnce takes one backup and then applies the retention.
func (s *Scheduler) RunOnce(ctx context.Context) error {
	start := s.cfg.Now().UTC()
	name := fileName(start)
	size, err := s.cfg.Backup(ctx, filepath.Join(s.cfg.Dir, name))
	if err != nil {
		if ctx.Err() != nil {
			return err // stopping: not a failure of the backup
		}
		s.failures.Inc()
		s.cfg.Logger.Error("backup failed", "dir", s.cfg.Dir, "error", err.Error())
		s.mu.Lock()
		s.report.LastFailure, s.report.LastError = &start, err.Error()
		s.mu.Unlock()
		return err
	}
	s.cfg.Logger.Info("backup written", "file", name, "bytes", size, "took", s.cfg.Now().Sub(start).Round(time.Millisecond).String())
	s.mu.Lock()
	s.report.LastFailure, s.report.LastError = nil, ""
	s.mu.Unlock()
	files, err := s.list()
	if err == nil {
		files, err = s.prune(files, start)
	}
	s.setKept(files)
	if err != nil {
		// The backup is written; a file the retention could not remove is removed at the next one.
		s.cfg.Logger.Warn("applying the backup retention", "dir", s.cfg.Dir, "error", err.Error())
	}
	return nil
}

// Report is the state of the backups, as the operator reads it.
func (s *Scheduler) Report() contract.BackupReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.report
	if r.Last != nil {
		last := *r.Last
		r.Last = &last
	}
	return r
}

// Handler serves Report at contract.BackupPath.
func (s *Scheduler) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, err := json.Marshal(s.Report())
		if err != nil {
			http.Error(w, "encoding the backup report failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

// filePrefix and fileSuffix frame the names of the backups: parley-20060102T150405Z.db, in UTC, so that names sort
// as times do.
const (
	filePrefix = "parley-"
	fileSuffix = ".db"
	timeLayout = "20060102T150405Z"
)

func fileName(t time.Time) string { return filePrefix + t.UTC().Format(timeLayout) + fileSuffix }

// list returns the backups in the directory, oldest first.
func (s *Scheduler) list() ([]contract.BackupFile, error) {
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("backup: listing %s: %w", s.cfg.Dir, err)
	}
	var files []contract.BackupFile
	for _, e := range entries {
		stamp, ours := strings.CutPrefix(e.Name(), filePrefix)
		stamp, dotDB := strings.CutSuffix(stamp, fileSuffix)
		t, err := time.Parse(timeLayout, stamp)
		if !ours || !dotDB || err != nil || !e.Type().IsRegular() {
			continue // not one of ours
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, contract.BackupFile{Name: e.Name(), Time: t, Size: info.Size()})
	}
	slices.SortFunc(files, func(a, b contract.BackupFile) int { return a.Time.Compare(b.Time) })
	return files, nil
}

// Expired returns the backups of files (oldest first) the retention removes at now: all but the newest keep, and
// those older than maxAge when it is positive. The newest backup is never expired.
func Expired(files []contract.BackupFile, keep int, maxAge time.Duration, now time.Time) []contract.BackupFile {
	var out []contract.BackupFile
	for i, f := range files {
		newer := len(files) - 1 - i
		switch {
		case newer == 0:
		case newer >= keep, maxAge > 0 && now.Sub(f.Time) > maxAge:
			out = append(out, f)
		}
	}
	return out
}

// prune removes the backups the retention expires and returns those left.
func (s *Scheduler) prune(files []contract.BackupFile, now time.Time) ([]contract.BackupFile, error) {
	var errs []error
	for _, f := range Expired(files, s.cfg.Keep, s.cfg.MaxAge, now) {
		if err := os.Remove(filepath.Join(s.cfg.Dir, f.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		files = slices.DeleteFunc(files, func(g contract.BackupFile) bool { return g.Name == f.Name })
		s.cfg.Logger.Info("backup removed by the retention", "file", f.Name)
	}
	return files, errors.Join(errs...)
}

// setKept reports files, oldest first, as the directory's backups.
func (s *Scheduler) setKept(files []contract.BackupFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.report.Kept = len(files)
	s.report.Last = nil
	if len(files) > 0 {
		last := files[len(files)-1]
		s.report.Last = &last
		s.lastTime.Set(float64(last.Time.Unix()))
		s.lastSize.Set(float64(last.Size))
	}
}
