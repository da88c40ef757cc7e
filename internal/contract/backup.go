package contract

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// BackupPath is where `parley runtime` serves the state of its scheduled backups (--backup-dir) on its metrics
// listener, for the operator to copy into the ChatRuntime's status.backup. It answers 404 when backups are off.
const BackupPath = "/backup"

// BackupReport is the runtime's answer at BackupPath.
type BackupReport struct {
	// Last is the newest backup in the backup directory, written by this process or an earlier one; nil when
	// there is none.
	Last *BackupFile `json:"last,omitempty"`
	// Kept is how many backups the directory holds after the retention was applied.
	Kept int `json:"kept"`
	// LastFailure is when the latest backup attempt failed, and LastError why; both are empty once a later
	// attempt succeeded.
	LastFailure *time.Time `json:"last_failure,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	// Next is when the next backup is due.
	Next time.Time `json:"next"`
}

// BackupFile is one checked backup in the backup directory.
type BackupFile struct {
	// Name is the file's name in the backup directory.
	Name string `json:"name"`
	// Time is when the backup's snapshot was taken.
	Time time.Time `json:"time"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
}

// Backup configures the scheduled backups of a SQLite store (--backup-*).
type Backup struct {
	// Dir is the directory backups are written to (--backup-dir); empty takes none.
	Dir string
	// Schedule says when (--backup-schedule, ParseSchedule).
	Schedule string
	// Keep is how many backups are kept, newest first (--backup-keep).
	Keep int
	// MaxAge, when positive, removes older backups, the newest excepted (--backup-max-age).
	MaxAge time.Duration
}

// The defaults of the backup flags: a backup a day, a week of them.
const (
	DefaultBackupSchedule = "@daily"
	DefaultBackupKeep     = 7
	// MinBackupInterval is the shortest interval between backups a schedule may ask for.
	MinBackupInterval = time.Minute
)

// Validate reports the first backup setting the runtime cannot run with.
func (b Backup) Validate() error {
	if _, err := ParseSchedule(b.Schedule); err != nil {
		return fmt.Errorf("--%s: %w", FlagBackupSchedule, err)
	}
	switch {
	case b.Keep < 1:
		return fmt.Errorf("--%s must be at least 1", FlagBackupKeep)
	case b.MaxAge < 0:
		return fmt.Errorf("--%s must not be negative", FlagBackupMaxAge)
	}
	return nil
}

// ParseSchedule reads a backup schedule as Kubernetes CronJobs read theirs: five cron fields ("0 3 * * *", in
// UTC unless it starts with CRON_TZ=<zone>), a descriptor (@hourly, @daily, @weekly), or @every <duration> of at
// least MinBackupInterval.
func ParseSchedule(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	if every, ok := s.(cron.ConstantDelaySchedule); ok && every.Delay < MinBackupInterval {
		return nil, fmt.Errorf("schedule %q: backups at most every %s", spec, MinBackupInterval)
	}
	return s, nil
}
