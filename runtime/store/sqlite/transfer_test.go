package sqlite_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// seedEveryTable gives the merchant rows in every table that holds a merchant's data, through the store where it
// writes them and directly where only a delivery's run or a dashboard writes them.
func seedEveryTable(t *testing.T, path, merchantID string) {
	t.Helper()
	ctx := t.Context()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	seedMarked(t, s, merchantID, "SEED"+merchantID, 3)
	if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: merchantID, Title: "Returns", Content: "30 days, «free»",
		Tags: []string{"returns"}, File: "returns.pdf", CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(tx store.Tx) error {
		return tx.ReplaceKnowledgeVectors(ctx, merchantID, "k1", []store.KnowledgeVector{
			{KnowledgeID: "k1", Model: "text-embedding-3-small@4", TextHash: "hash", Vector: []float32{0.5, -0.5, 0.5, -0.5}}})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO delivery_attempts (merchant_id, delivery_id, attempt, at, url, status_code, latency_ms, error)
			SELECT merchant_id, id, 1, 1700000000000, url, 502, 31, 'bad gateway' FROM deliveries WHERE merchant_id = ?1`,
		`INSERT INTO disabled_endpoints (merchant_id, webhook_id, url, disabled_at) VALUES (?1, 'crm', 'https://crm.example/hook', 1700000000000)`,
		`INSERT INTO monthly_tokens (merchant_id, month, tokens) VALUES (?1, '2026-03', 1234)`,
		`INSERT INTO leases (merchant_id, name, holder, until) VALUES (?1, 'embed', 'parley-0', 1700000000000)`,
		`INSERT INTO knowledge_uses (merchant_id, id, uses) VALUES (?1, 'k1', 7)`,
		`INSERT INTO api_keys (merchant_id, id, type, sha256, created_at, last_used_at, revoked_at)
			VALUES (?1, 'key1', 'secret', 'sha-' || ?1, 1700000000000, NULL, 1700000360000)`,
		`INSERT INTO knowledge_sources (merchant_id, id, type, url, include, max_pages, sync_interval_s, status, pages,
			items, last_synced_at, next_sync_at, generation, synced_generation, last_outcome, created_at, updated_at)
			VALUES (?1, 'src1', 'website', 'https://shop.example/', '/help/*', 500, 86400, 'ready', 1, 1,
				1700000000000, 1700086400000, 3, 3, 'ready', 1700000000000, 1700000000000)`,
		`INSERT INTO source_pages (merchant_id, source_id, url, status, etag, content_hash, links, items, fetched_at)
			VALUES (?1, 'src1', 'https://shop.example/help', 'read', '"v1"', 'hash', 'https://shop.example/', 1, 1700000000000)`,
		`INSERT INTO stream_events (merchant_id, seq, conversation_id, type, payload, created_at)
			VALUES (?1, 1, 'SEED' || ?1 || '000', 'conversation.waiting', '{"status":"waiting"}', 1700000000000)`,
		`INSERT INTO stream_heads (merchant_id, seq) VALUES (?1, 1)`,
		`INSERT INTO team_presence (merchant_id, seen_at) VALUES (?1, 1700000000000)`,
		`INSERT INTO merchant_uids (merchant_id, uid, since) VALUES (?1, 'uid-' || ?1, 1700000000000)`,
		`INSERT INTO answer_ratings (merchant_id, conversation_id, message_id, visitor_id, rating, comment, created_at, updated_at)
			SELECT merchant_id, conversation_id, id, 'v1', 'down', 'out of date', 1700000000000, 1700000000000
			FROM messages WHERE merchant_id = ?1 AND role = 'assistant' LIMIT 1`,
		`INSERT INTO conversation_ratings (merchant_id, conversation_id, visitor_id, score, comment, created_at, updated_at)
			SELECT merchant_id, id, 'v1', 4, 'quick', 1700000000000, 1700000000000 FROM conversations WHERE merchant_id = ?1 LIMIT 1`,
		`INSERT INTO review_fixes (merchant_id, question, knowledge_id, fixed_at) VALUES (?1, 'can i pay by voucher', 'k1', 1700000000000)`,
	} {
		if _, err := db.ExecContext(ctx, q, merchantID); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// merchantRows returns every row of the merchant in every merchant table, without the tables' integer row keys
// (seq), which each database gives of its own, sorted.
func merchantRows(t *testing.T, path, merchantID string) []string {
	t.Helper()
	db := openReadOnly(t, path)
	defer db.Close() // the import refuses a database in use
	var out []string
	for _, table := range sqlite.MerchantTables {
		cols, err := queryStrings(db, `SELECT name FROM pragma_table_info(?) WHERE name != 'seq' ORDER BY cid`, table)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(t.Context(), `SELECT "`+strings.Join(cols, `", "`)+`" FROM "`+table+`" WHERE merchant_id = ?`, merchantID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s|%#v", table, vals))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// TestMerchantRoundTrip exports one merchant from one SQLite file and imports it into another that holds another
// merchant, and finds every row of every table as it was, the other merchants' untouched.
func TestMerchantRoundTrip(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	seedEveryTable(t, src, "m1")
	seedEveryTable(t, src, "m2")
	seedEveryTable(t, dst, "m3")
	want := merchantRows(t, src, "m1")
	for _, table := range sqlite.MerchantTables {
		if !slices.ContainsFunc(want, func(r string) bool { return strings.HasPrefix(r, table+"|") }) {
			t.Fatalf("the seed left table %s empty: the round trip would not cover it", table)
		}
	}
	other := merchantRows(t, dst, "m3")

	var export bytes.Buffer
	n, err := sqlite.ExportMerchant(ctx, src, "m1", &export, at)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Errorf("exported %d rows, the merchant has %d", n, len(want))
	}
	if strings.Contains(export.String(), "SEEDm2") {
		t.Error("the export holds another merchant's data")
	}
	id, imported, err := sqlite.ImportMerchant(ctx, bytes.NewReader(export.Bytes()), dst)
	if err != nil {
		t.Fatal(err)
	}
	if id != "m1" || imported != n {
		t.Errorf("imported %s, %d rows", id, imported)
	}
	if got := merchantRows(t, dst, "m1"); !slices.Equal(got, want) {
		t.Errorf("after the round trip:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := merchantRows(t, dst, "m3"); !slices.Equal(got, other) {
		t.Error("the import changed another merchant's rows")
	}

	// The imported merchant serves: its conversation in order, its knowledge.
	s, err := sqlite.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	c, msgs, err := s.GetConversation(ctx, "m1", "SEEDm1000")
	if err != nil || c.MessageCount != 2 || len(msgs) != 2 || msgs[0].Role != store.RoleVisitor {
		t.Errorf("the imported conversation: %+v %+v %v", c, msgs, err)
	}
	if k, err := s.GetKnowledge(ctx, "m1", "k1"); err != nil || k.Content != "30 days, «free»" || k.File != "returns.pdf" {
		t.Errorf("the imported knowledge: %+v %v", k, err)
	}
	// Not twice, and not while in use.
	if _, _, err := sqlite.ImportMerchant(ctx, bytes.NewReader(export.Bytes()), dst); !errors.Is(err, sqlite.ErrInUse) {
		t.Errorf("an import into a database in use: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sqlite.ImportMerchant(ctx, bytes.NewReader(export.Bytes()), dst); err == nil || !strings.Contains(err.Error(), "has data") {
		t.Errorf("a second import of the merchant: %v", err)
	}
}

func TestMerchantImportRefuses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	seedEveryTable(t, src, "m1")
	var buf bytes.Buffer
	if _, err := sqlite.ExportMerchant(ctx, src, "m1", &buf, at); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	lines := strings.SplitAfter(good, "\n")
	for name, tc := range map[string]struct {
		export string
		want   string
	}{
		"empty":            {"", "header"},
		"another format":   {`{"format":"something","version":1,"merchant_id":"m1"}` + "\n", "not a merchant export"},
		"another schema":   {strings.Replace(good, `"schema_version":`, `"schema_version":1`, 1), "schema version"},
		"cut short":        {strings.Join(lines[:len(lines)/2], ""), "cut short"},
		"another merchant": {strings.Replace(good, `"row":["m1"`, `"row":["m9"`, 1), "another merchant"},
		"an unknown table": {strings.Replace(good, `"table":"api_keys"`, `"table":"sqlite_master"`, 1), "holds no merchant's data"},
		"a missing row":    {strings.Join(slices.Delete(slices.Clone(lines), len(lines)-3, len(lines)-2), ""), "says"},
	} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst.db")
			seedEveryTable(t, dst, "m3")
			before := merchantRows(t, dst, "m3")
			_, _, err := sqlite.ImportMerchant(ctx, strings.NewReader(tc.export), dst)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
			if got := merchantRows(t, dst, "m1"); len(got) > 0 {
				t.Errorf("a refused import wrote %d rows", len(got))
			}
			if got := merchantRows(t, dst, "m3"); !slices.Equal(got, before) {
				t.Error("a refused import changed another merchant")
			}
		})
	}
	if _, err := sqlite.ExportMerchant(ctx, filepath.Join(dir, "none.db"), "m1", &bytes.Buffer{}, time.Now()); err == nil {
		t.Error("an export of a missing database succeeded")
	}
}
