package main

import (
	"context"
	"io"
	"os"

	"github.com/parley-dev/parley/internal/contract"
)

// runRuntime serves the chat runtime as the operator deploys it, configured by its arguments and environment.
func runRuntime(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := contract.ParseRuntime(args, os.Getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	a, err := assemble(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.close()
	ln, err := listen(cfg.Listen)
	if err != nil {
		return err
	}
	return a.serve(ctx, ln, a.handler)
}
