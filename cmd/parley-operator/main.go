// Command parley-operator is Parley's operator: the controller manager that reconciles Plans, ChatRuntimes,
// Merchants, APIKeys and Webhooks into the chat runtime's Deployments and tenant bundles.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/parley-dev/parley/internal/contract"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(exitCode())
}

func exitCode() int {
	contract.SetMemoryLimit()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runOperator(ctx, os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "parley-operator:", err)
		}
		return 2
	}
	return 0
}
