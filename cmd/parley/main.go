// Command parley is Parley's one binary: the operator and the chat runtime.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/parley-dev/parley/internal/contract"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `parley runs AI chatbots for many merchants on Kubernetes.

Usage:
  parley <command> [flags]

Commands:
  operator   run the controller manager that reconciles Plans, ChatRuntimes, Merchants, APIKeys and Webhooks
  runtime    serve the chat runtime: the /api/v1 interface for the merchants of one ChatRuntime
  dev        run the chat runtime on this machine with a demo merchant: no cluster, no configuration
  version    print the version

Run 'parley <command> --help' for a command's flags.
`

func main() {
	os.Exit(exitCode())
}

func exitCode() int {
	if limit, ok := contract.MemoryLimit(os.Getenv(contract.EnvMemoryLimit), os.Getenv("GOMEMLIMIT") != ""); ok {
		debug.SetMemoryLimit(limit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "parley:", err)
		}
		return 2
	}
	return 0
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("a command is required")
	}
	switch args[0] {
	case "operator":
		return runOperator(ctx, args[1:], stderr)
	case "runtime":
		return runRuntime(ctx, args[1:], stderr)
	case "dev":
		return runDev(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
