package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// errReportNotServed is a runtime that answers 404 for a report: one it does not serve, such as the backup report
// of a runtime not yet rolled out with spec.backup.
var errReportNotServed = errors.New("the runtime serves no such report")

// fetchReport reads the JSON report at path from a runtime's metrics listener at address (never its public
// port), at most limit bytes of it, within 10 seconds.
func fetchReport[T any](ctx context.Context, hc *http.Client, address, path string, limit int64) (T, error) {
	var report T
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+path, nil)
	if err != nil {
		return report, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return report, err
	}
	defer func() { _ = res.Body.Close() }()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return report, errReportNotServed
	default:
		return report, fmt.Errorf("the runtime answered %s", res.Status)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, res.Body, limit)).Decode(&report); err != nil {
		return report, fmt.Errorf("decoding the report of %s: %w", path, err)
	}
	return report, nil
}

// pollEvery runs poll now and then every interval until ctx ends: the loop of the pollers that copy what only
// the runtimes know into status.
func pollEvery(ctx context.Context, interval time.Duration, poll func(context.Context)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
