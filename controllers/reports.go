package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// runtimePoller is what the pollers that copy what only the runtimes know into status share (BackupPoller,
// UsagePoller): the ChatRuntimes they read, where each serves its reports, and how often they read them.
type runtimePoller struct {
	Client client.Client
	// Namespace is where the ChatRuntimes live.
	Namespace string
	Interval  time.Duration
	// Address is the host:port of a ChatRuntime's metrics listener: its Service's metrics port in the cluster, or
	// one address for an operator run outside it (--usage-address).
	Address func(rt *chatv1alpha1.ChatRuntime) string
	HTTP    *http.Client
	Log     logr.Logger
}

// NeedLeaderElection makes only the leader poll, as only it writes status.
func (p *runtimePoller) NeedLeaderElection() bool { return true }

// eachRuntime calls read with each ChatRuntime of the namespace; a failure to list them is logged, as listing
// them for what.
func (p *runtimePoller) eachRuntime(ctx context.Context, what string, read func(rt *chatv1alpha1.ChatRuntime)) {
	var runtimes chatv1alpha1.ChatRuntimeList
	if err := p.Client.List(ctx, &runtimes, client.InNamespace(p.Namespace)); err != nil {
		p.Log.Error(err, "listing ChatRuntimes for their "+what)
		return
	}
	for i := range runtimes.Items {
		read(&runtimes.Items[i])
	}
}

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
