package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// runBackup writes a checked copy of a SQLite store's database, which the runtime may be using meanwhile.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "the SQLite database file to back up (the runtime's --sqlite-path); it may be in use")
	to := fs.String("to", "", "the backup file to write; replaced if it exists")
	if err := parseRequired(fs, args, "data", "to"); err != nil {
		return err
	}
	info, err := sqlite.Backup(ctx, *data, *to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s: %d bytes, schema version %d, checked\n", *data, info.Path, info.Size, info.SchemaVersion)
	return nil
}

// runRestore replaces a stopped SQLite runtime's database with a backup.
func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the backup file to restore (from parley backup or a runtime's --backup-dir)")
	data := fs.String("data", "", "the SQLite database file to replace (the runtime's --sqlite-path); no process may have it open")
	if err := parseRequired(fs, args, "from", "data"); err != nil {
		return err
	}
	info, err := sqlite.Verify(ctx, *from)
	if err != nil {
		return err
	}
	kept, err := sqlite.Restore(ctx, *from, *data, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s (%d bytes, schema version %d)\n", *data, *from, info.Size, info.SchemaVersion)
	if kept != "" {
		fmt.Fprintf(stdout, "the database it replaced is kept as %s; delete it once the restore is confirmed\n", kept)
	}
	return nil
}

// parseRequired parses args into fs and requires the flags named.
func parseRequired(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return errors.New("--" + name + " is required")
		}
	}
	return nil
}
