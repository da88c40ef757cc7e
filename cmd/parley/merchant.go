package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// runExportMerchant writes one merchant's rows of a SQLite store, which the runtime may be using, to a file.
func runExportMerchant(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley export-merchant", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "the SQLite database file (the runtime's --sqlite-path); it may be in use")
	merchant := fs.String("merchant", "", "the merchant ID (the Merchant's status.merchantID)")
	to := fs.String("to", "", "the file to write; it must not exist")
	if err := parseRequired(fs, args, "data", "merchant", "to"); err != nil {
		return err
	}
	f, err := os.OpenFile(*to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // personal data
	if err != nil {
		return err
	}
	n, err := sqlite.ExportMerchant(ctx, *data, *merchant, f, time.Now())
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return errors.Join(err, os.Remove(*to))
	}
	fmt.Fprintf(stdout, "exported merchant %s from %s to %s: %d rows\n", *merchant, *data, *to, n)
	return nil
}

// runImportMerchant writes an exported merchant into a stopped SQLite runtime's database.
func runImportMerchant(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley import-merchant", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the file parley export-merchant wrote")
	data := fs.String("data", "", "the SQLite database file to import into (created if missing); no process may have it open")
	if err := parseRequired(fs, args, "from", "data"); err != nil {
		return err
	}
	f, err := os.Open(*from)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	id, n, err := sqlite.ImportMerchant(ctx, f, *data)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported merchant %s into %s: %d rows\n", id, *data, n)
	return nil
}
