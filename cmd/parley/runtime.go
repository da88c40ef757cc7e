package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/logging"
	"github.com/parley-dev/parley/runtime/server"
)

// runRuntime serves the chat runtime as the operator deploys it, configured by its arguments and environment.
func runRuntime(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := contract.ParseRuntime(args, os.Getenv, stderr)
	if err != nil {
		return err
	}
	log := logging.New(stderr, cfg.LogLevel, cfg.LogFormat)
	a, err := assemble(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.close()
	ln, err := listen(cfg.Listen)
	if err != nil {
		return err
	}
	// The listeners stop together: when ctx ends, or when the public or the metrics one fails.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.PprofListen != "" {
		pln, err := listen(cfg.PprofListen)
		if err != nil {
			_ = ln.Close()
			return err
		}
		pprofDone := make(chan struct{})
		defer func() { cancel(); <-pprofDone }()
		go func() {
			defer close(pprofDone)
			_ = server.Serve(ctx, pln, pprofHandler(), "", "", log)
		}()
	}
	if cfg.MetricsListen == "" {
		return a.serve(ctx, ln, a.handler)
	}
	mln, err := listen(cfg.MetricsListen)
	if err != nil {
		_ = ln.Close()
		return err
	}
	metricsDone := make(chan error, 1)
	go func() {
		err := a.serveMetrics(ctx, mln)
		cancel()
		metricsDone <- err
	}()
	err = a.serve(ctx, ln, a.handler)
	cancel()
	return errors.Join(err, <-metricsDone)
}
