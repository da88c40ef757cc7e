package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/logging"
)

// defaultNamespace is the operator's namespace outside a cluster.
const defaultNamespace = "parley-system"

func runOperator(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley-operator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts controllers.Options
	var level slog.Level
	fs.StringVar(&opts.Namespace, "namespace", cmp.Or(os.Getenv("POD_NAMESPACE"), defaultNamespace),
		"the operator's namespace, where ChatRuntimes live, and the tenant bundles of runtimes without a targetNamespace (default: the pod's namespace, else parley-system)")
	fs.Func("watch-namespaces", "comma-separated namespaces whose objects the operator reconciles, its own included (default: every namespace)",
		func(v string) error {
			for ns := range strings.SplitSeq(v, ",") {
				if ns = strings.TrimSpace(ns); ns != "" {
					opts.WatchNamespaces = append(opts.WatchNamespaces, ns)
				}
			}
			return nil
		})
	fs.StringVar(&opts.RuntimeImage, "runtime-image", cmp.Or(os.Getenv("PARLEY_RUNTIME_IMAGE"), "ghcr.io/parley-dev/parley:"+version),
		"image of runtime Deployments whose ChatRuntime names none (default: $PARLEY_RUNTIME_IMAGE, the operator's own image)")
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint; "0" disables it`)
	fs.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", `address of /healthz and /readyz; "0" disables them`)
	fs.StringVar(&opts.PprofAddr, "pprof-bind-address", "0", `address of net/http/pprof's /debug/pprof/; "0" disables it`)
	fs.BoolVar(&opts.LeaderElection, "leader-elect", false, "elect a leader, so that several operator replicas can run")
	fs.IntVar(&opts.Workers, "workers", 64, "Merchants, APIKeys and Webhooks reconciled at once")
	qps := fs.Float64("kube-api-qps", 0,
		"requests a second the operator sends the API server, on average; 0 sets no limit of its own and leaves the pace to the API server's priority and fairness")
	burst := fs.Int("kube-api-burst", 0, "requests the operator may send at once beyond --kube-api-qps (default: twice the QPS)")
	fs.DurationVar(&opts.UsageInterval, "usage-interval", time.Minute,
		"how often each runtime's usage (conversations this month) is copied into its Merchants' status, and its backups' state into its ChatRuntime's; 0 turns both off")
	fs.StringVar(&opts.UsageAddress, "usage-address", "",
		"host:port of every ChatRuntime's metrics listener, instead of its Service's (for an operator run outside the cluster)")
	fs.TextVar(&level, "log-level", slog.LevelInfo, "log level: debug, info, warn or error")
	logFormat := fs.String("log-format", "json", "log format: json or text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	clientQPS, clientBurst, err := clientRate(*qps, *burst)
	if err != nil {
		return err
	}

	logger := logging.New(stderr, level, *logFormat)
	ctrl.SetLogger(logr.FromSlogHandler(logger.Handler()))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("finding the cluster: %w", err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	mgr, err := controllers.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	logger.Info("starting the operator", "version", version, "namespace", opts.Namespace, "watchNamespaces", opts.WatchNamespaces,
		"runtimeImage", opts.RuntimeImage)
	return mgr.Start(ctx)
}

// clientRate is the rest client's QPS and burst for the --kube-api-qps and --kube-api-burst flags. Without a QPS
// the client throttles nothing (a negative QPS, as controller-runtime sets by default): the API server's priority
// and fairness queues the operator's requests with everyone else's, and a client-side limit would only hold back
// merchants on an idle server. A platform that shares its API server sets one.
func clientRate(qps float64, burst int) (float32, int, error) {
	switch {
	case qps < 0 || burst < 0:
		return 0, 0, fmt.Errorf("--kube-api-qps (%g) and --kube-api-burst (%d) must not be negative", qps, burst)
	case qps == 0 && burst > 0:
		return 0, 0, errors.New("--kube-api-burst needs --kube-api-qps")
	case qps == 0:
		return -1, 0, nil
	case burst == 0:
		return float32(qps), max(int(2*qps), 1), nil
	case float64(burst) < qps:
		return 0, 0, fmt.Errorf("--kube-api-burst (%d) must be at least --kube-api-qps (%g)", burst, qps)
	}
	return float32(qps), burst, nil
}
