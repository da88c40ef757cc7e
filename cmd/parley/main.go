// Command parley is Parley's chat runtime: `parley runtime` as the operator deploys it, and `parley dev` on one
// machine. The operator is its own command, parley-operator, in the same image: apart, neither keeps the other's
// code resident.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/heapfloor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `parley runs AI chatbots for many merchants on Kubernetes.

Usage:
  parley <command> [flags]

Commands:
  runtime          serve the chat runtime: the /api/v1 interface for the merchants of one ChatRuntime
  dev              run the chat runtime on this machine with a demo merchant: no cluster, no configuration
  backup           write a checked copy of a SQLite runtime's database, in use or not
  restore          replace a stopped SQLite runtime's database with a checked backup
  export-merchant  write one merchant's data of a SQLite runtime's database to a file
  import-merchant  write an exported merchant into a stopped SQLite runtime's database
  version          print the version

Run 'parley <command> --help' for a command's flags. The operator is the parley-operator command.
`

// heapFloor is the heap under which the garbage collector does not run (heapfloor.Keep): under load the
// runtime's live heap is about 10 MB, which GOGC's default collected every 50 ms at 12,000 chats a second.
const heapFloor = 64 << 20

func main() {
	contract.Main("parley", func(ctx context.Context) error {
		heapfloor.Keep(ctx, heapFloor)
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("a command is required")
	}
	switch args[0] {
	case "operator":
		return errors.New("the operator is its own command: parley-operator, beside parley in the image")
	case "runtime":
		return runRuntime(ctx, args[1:], stderr)
	case "dev":
		return runDev(ctx, args[1:], stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], stdout, stderr)
	case "restore":
		return runRestore(ctx, args[1:], stdout, stderr)
	case "export-merchant":
		return runExportMerchant(ctx, args[1:], stdout, stderr)
	case "import-merchant":
		return runImportMerchant(ctx, args[1:], stdout, stderr)
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
