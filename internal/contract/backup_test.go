package contract

import (
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	from := time.Date(2026, time.March, 10, 12, 30, 0, 0, time.UTC)
	for spec, next := range map[string]time.Time{
		"0 3 * * *":                       time.Date(2026, time.March, 11, 3, 0, 0, 0, time.UTC),
		"*/15 * * * *":                    time.Date(2026, time.March, 10, 12, 45, 0, 0, time.UTC),
		"@daily":                          time.Date(2026, time.March, 11, 0, 0, 0, 0, time.UTC),
		"@hourly":                         time.Date(2026, time.March, 10, 13, 0, 0, 0, time.UTC),
		"@every 6h":                       from.Add(6 * time.Hour),
		"@every 1m":                       from.Add(time.Minute),
		"CRON_TZ=Europe/Berlin 0 3 * * *": time.Date(2026, time.March, 11, 2, 0, 0, 0, time.UTC),
	} {
		s, err := ParseSchedule(spec)
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", spec, err)
			continue
		}
		if got := s.Next(from); !got.Equal(next) {
			t.Errorf("ParseSchedule(%q).Next = %v, want %v", spec, got, next)
		}
	}
	for _, spec := range []string{"", "daily", "every 6h", "@every 30s", "@every -1h", "61 * * * *", "0 3 * * * *", "CRON_TZ=Nowhere/Land 0 3 * * *"} {
		if _, err := ParseSchedule(spec); err == nil {
			t.Errorf("ParseSchedule(%q) accepted it", spec)
		}
	}
}
