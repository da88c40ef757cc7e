package main

import (
	"cmp"
	"context"
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
	fs.IntVar(&opts.Workers, "workers", 32, "Merchants, APIKeys and Webhooks reconciled at once")
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

	logger := logging.New(stderr, level, *logFormat)
	ctrl.SetLogger(logr.FromSlogHandler(logger.Handler()))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("finding the cluster: %w", err)
	}
	mgr, err := controllers.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	logger.Info("starting the operator", "version", version, "namespace", opts.Namespace, "watchNamespaces", opts.WatchNamespaces,
		"runtimeImage", opts.RuntimeImage)
	return mgr.Start(ctx)
}
