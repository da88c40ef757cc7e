package contract

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main runs a parley command's run as Kubernetes runs the command: with the Go runtime's memory limit set from
// the container's (SetMemoryLimit), its context cancelled on SIGTERM or an interrupt, and exit status 2 after
// printing its error, as "name: error", to standard error. It never returns.
func Main(name string, run func(context.Context) error) {
	SetMemoryLimit()
	os.Exit(exitCode(name, run, os.Stderr))
}

// exitCode runs run until it returns or a signal stops it, and returns the process's exit status. A request for
// help is no failure to report: the flag set printed the usage.
func exitCode(name string, run func(context.Context) error, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
		}
		return 2
	}
	return 0
}
