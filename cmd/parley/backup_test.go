package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

func recordExchange(t *testing.T, s store.Store, id string) {
	t.Helper()
	at := time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)
	_, err := chat.RecordExchange(t.Context(), s, store.Exchange{MerchantID: "m1", ConversationID: id, VisitorID: "v1",
		Question: store.Message{ID: id + "-q", Role: store.RoleVisitor, Text: "where is my order " + id, CreatedAt: at},
		Answer:   store.Message{ID: id + "-a", Role: store.RoleAssistant, Text: "on its way", CreatedAt: at.Add(time.Second), Answered: true}})
	if err != nil {
		t.Fatal(err)
	}
}

// conversations are the IDs of m1's conversations in the database at path.
func conversations(t *testing.T, path string) []string {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, _, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestBackupChangeRestoreCommands backs up with `parley backup`, changes the data, restores with `parley restore`,
// and finds the data as it was.
func TestBackupChangeRestoreCommands(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	data := filepath.Join(dir, "data", "parley.db")
	file := filepath.Join(dir, "backups", "before.db")
	s, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	recordExchange(t, s, "c1")
	recordExchange(t, s, "c2")
	// The runtime may be running: the backup reads a snapshot beside it.
	var out bytes.Buffer
	if err := run(ctx, []string{"backup", "--data", data, "--to", file}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "checked") {
		t.Errorf("parley backup said %q", out.String())
	}
	recordExchange(t, s, "c3")
	if _, err := chat.EraseMerchant(ctx, s, "m1"); err != nil {
		t.Fatal(err)
	}
	recordExchange(t, s, "c4")

	// Not while the runtime has the database open.
	err = run(ctx, []string{"restore", "--from", file, "--data", data}, io.Discard, io.Discard)
	if !errors.Is(err, sqlite.ErrInUse) {
		t.Fatalf("restore of a database in use: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(conversations(t, data), ","); got != "c4" {
		t.Fatalf("before the restore: %s", got)
	}

	out.Reset()
	if err := run(ctx, []string{"restore", "--from", file, "--data", data}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(conversations(t, data), ","); got != "c2,c1" {
		t.Errorf("after the restore: %s, want c2,c1", got)
	}
	if !strings.Contains(out.String(), "is kept as "+data+".before-restore-") {
		t.Errorf("parley restore said %q", out.String())
	}
	kept, _ := filepath.Glob(data + ".before-restore-*")
	if len(kept) != 1 {
		t.Fatalf("kept %v", kept)
	}
	if got := strings.Join(conversations(t, kept[0]), ","); got != "c4" {
		t.Errorf("the replaced database holds %s", got)
	}

	// Into an empty directory: a new runtime's volume.
	fresh := filepath.Join(dir, "fresh", "parley.db")
	if err := run(ctx, []string{"restore", "--from", file, "--data", fresh}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(conversations(t, fresh), ","); got != "c2,c1" {
		t.Errorf("restored into a new directory: %s", got)
	}
}

func TestBackupCommandsRefuse(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "parley.db")
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"backup", "--to", "b.db"}, "--data is required"},
		{[]string{"backup", "--data", data}, "--to is required"},
		{[]string{"backup", "--data", data, "--to", "b.db", "extra"}, "unexpected arguments"},
		{[]string{"backup", "--data", filepath.Join(dir, "none.db"), "--to", filepath.Join(dir, "b.db")}, "no such file"},
		{[]string{"restore", "--data", data}, "--from is required"},
		{[]string{"restore", "--from", junk}, "--data is required"},
		{[]string{"restore", "--from", junk, "--data", data}, "not a database"},
		{[]string{"restore", "--from", filepath.Join(dir, "none.db"), "--data", data}, "no such file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := run(t.Context(), tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error %q, got %v", tc.wantErr, err)
			}
		})
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused restore wrote %s: %v", data, err)
	}
}

// TestMerchantCommands moves one merchant from one database to another with `parley export-merchant` and
// `parley import-merchant`.
func TestMerchantCommands(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	src, dst, file := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db"), filepath.Join(dir, "m1.jsonl")
	s, err := sqlite.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	recordExchange(t, s, "c1")
	recordExchange(t, s, "c2")
	var out bytes.Buffer
	if err := run(ctx, []string{"export-merchant", "--data", src, "--merchant", "m1", "--to", file}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the export file: %v, %v", st, err)
	}
	if err := run(ctx, []string{"export-merchant", "--data", src, "--merchant", "m1", "--to", file}, io.Discard, io.Discard); err == nil {
		t.Error("an export overwrote a file")
	}
	out.Reset()
	if err := run(ctx, []string{"import-merchant", "--from", file, "--data", dst}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(conversations(t, dst), ","); got != "c2,c1" {
		t.Errorf("imported conversations %s", got)
	}
	if !strings.Contains(out.String(), "imported merchant m1") {
		t.Errorf("parley import-merchant said %q", out.String())
	}
	for _, args := range [][]string{
		{"export-merchant", "--data", src, "--to", filepath.Join(dir, "x")},
		{"import-merchant", "--data", dst},
		{"import-merchant", "--from", filepath.Join(dir, "none.jsonl"), "--data", dst},
	} {
		if err := run(ctx, args, io.Discard, io.Discard); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
}
