package controllers

import (
	"strings"
	"testing"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

// backupSchedules are schedules with what becomes of each: whether the CRD's schema admits it, and whether the
// runtime can run with it (contract.ParseSchedule). The schema admits no schedule the runtime refuses but for
// what only a parse sees, which the operator reports instead (TestBackupScheduleAdmission runs them all on a real
// API server).
var backupSchedules = []struct {
	schedule      string
	admitted, run bool
}{
	{"0 3 * * *", true, true},
	{"*/15 * * * *", true, true},
	{"5/10 0-23/2 1,15 JAN-jun mon-FRI", true, true},
	{"00 03 01 01 00", true, true},
	{"0 3 ? * ?", true, true},
	{"CRON_TZ=Europe/Berlin 30 2 * * *", true, true},
	{"TZ=UTC 0 3 * * sun", true, true},
	{"@daily", true, true},
	{"@every 6h", true, true},
	{"TZ=UTC @hourly", true, true},
	{"60 3 * * *", false, false},
	{"0 24 * * *", false, false},
	{"0 3 0 * *", false, false},
	{"0 3 32 * *", false, false},
	{"0 3 * 13 *", false, false},
	{"0 3 * * 7", false, false},
	{"0 3 * * mon#2", false, false},
	{"0 3 L * *", false, false},
	{"*/0 * * * *", false, false},
	{"0 3 * * * *", false, false},
	{"0 3 * *", false, false},
	{"every night", false, false},
	{"@every 10s", false, false},
	{"TZ=UTC @every 10s", false, false},
	{"@every soon", false, false},
	// Only a parse sees these: a range that runs backwards, a zone the zone database does not know.
	{"30-10 * * * *", true, false},
	{"0 3 * * fri-mon", true, false},
	{"CRON_TZ=Mars/Olympus_Mons 0 3 * * *", true, false},
}

func TestBackupSchedules(t *testing.T) {
	for _, tc := range backupSchedules {
		_, err := contract.ParseSchedule(tc.schedule)
		if (err == nil) != tc.run {
			t.Errorf("%q: the runtime's parse says %v, the table %v", tc.schedule, err, tc.run)
		}
		if tc.run && !tc.admitted {
			t.Errorf("%q: the table has the schema refuse a schedule the runtime runs", tc.schedule)
		}
	}
}

func TestBackupScheduleProblem(t *testing.T) {
	withBackup := func(storage chatv1alpha1.StorageType, backup *chatv1alpha1.BackupSpec) *chatv1alpha1.ChatRuntime {
		return &chatv1alpha1.ChatRuntime{Spec: chatv1alpha1.ChatRuntimeSpec{Storage: chatv1alpha1.StorageSpec{Type: storage}, Backup: backup}}
	}
	for _, tc := range []struct {
		name string
		rt   *chatv1alpha1.ChatRuntime
		want string // a part of the problem; "" for none
	}{
		{"no backups", withBackup(chatv1alpha1.StorageSQLite, nil), ""},
		{"the default schedule", withBackup(chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{ClaimName: "b"}), ""},
		{"a good schedule", withBackup(chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{Schedule: "0 3 * * *", ClaimName: "b"}), ""},
		{"a backwards range", withBackup(chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{Schedule: "30-10 * * * *", ClaimName: "b"}),
			`spec.backup.schedule: schedule "30-10 * * * *"`},
		{"an unknown zone", withBackup(chatv1alpha1.StorageSQLite, &chatv1alpha1.BackupSpec{Schedule: "CRON_TZ=Mars/Olympus_Mons 0 3 * * *", ClaimName: "b"}),
			"Mars/Olympus_Mons"},
		// PostgreSQL runtimes take no backups of their own: their schedule is never run.
		{"postgres", withBackup(chatv1alpha1.StoragePostgres, &chatv1alpha1.BackupSpec{Schedule: "30-10 * * * *", ClaimName: "b"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := backupScheduleProblem(tc.rt)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("problem %q, want one containing %q", got, tc.want)
			}
		})
	}
}
