// Command parley-operator is Parley's operator: the controller manager that reconciles Plans, ChatRuntimes,
// Merchants, APIKeys and Webhooks into the chat runtime's Deployments and tenant bundles.
package main

import (
	"context"
	"os"

	"github.com/parley-dev/parley/internal/contract"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	contract.Main("parley-operator", func(ctx context.Context) error { return runOperator(ctx, os.Args[1:], os.Stderr) })
}
