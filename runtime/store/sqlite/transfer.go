package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MerchantExportFormat names the document ExportMerchant writes (docs/operating.md, "Moving one merchant").
const MerchantExportFormat = "parley.merchant.sqlite"

// exportHeader is the first line of an export.
type exportHeader struct {
	Format        string    `json:"format"`
	Version       int       `json:"version"`
	MerchantID    string    `json:"merchant_id"`
	SchemaVersion int64     `json:"schema_version"`
	ExportedAt    time.Time `json:"exported_at"`
}

// exportLine is every later line: a table's columns, one of its rows, or the end with the count of rows.
type exportLine struct {
	Table   string            `json:"table,omitempty"`
	Columns []string          `json:"columns,omitempty"`
	Row     []json.RawMessage `json:"row,omitempty"`
	End     bool              `json:"end,omitempty"`
	Rows    int               `json:"rows,omitempty"`
}

// ExportMerchant writes every row the merchant has, in every table that holds a merchant's data (the tables
// EraseMerchant erases: conversations, messages, leads, knowledge, events, deliveries, counters, self-service
// keys), from the database at src, which may be in use, to w as JSON lines, and returns how many rows it wrote.
// It reads one snapshot. A table's integer row key (the order of messages and deliveries) is left out and the rows
// are written in its order, so the importing database gives them keys of its own in the same order.
func ExportMerchant(ctx context.Context, src, merchantID string, w io.Writer, now time.Time) (int, error) {
	n, err := exportMerchant(ctx, src, merchantID, w, now)
	if err != nil {
		return 0, fmt.Errorf("exporting merchant %s from %s: %w", merchantID, src, err)
	}
	return n, nil
}

func exportMerchant(ctx context.Context, src, merchantID string, w io.Writer, now time.Time) (int, error) {
	if merchantID == "" {
		return 0, errors.New("no merchant ID")
	}
	if _, err := os.Stat(src); err != nil {
		return 0, err
	}
	db, err := openReadOnly(ctx, src)
	if err != nil {
		return 0, err
	}
	defer func() { _ = db.Close() }()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	var version int64
	if err := tx.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil {
		return 0, fmt.Errorf("not a Parley database: %w", err)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(exportHeader{Format: MerchantExportFormat, Version: 1, MerchantID: merchantID, SchemaVersion: version,
		ExportedAt: now.UTC()}); err != nil {
		return 0, err
	}
	total := 0
	for _, table := range slices.Backward(merchantTables) { // parents before children, for their foreign keys
		cols, key, err := tableColumns(ctx, tx, table)
		if err != nil {
			return 0, err
		}
		if err := enc.Encode(exportLine{Table: table, Columns: cols}); err != nil {
			return 0, err
		}
		order := ""
		if key != "" {
			order = ` ORDER BY "` + key + `"`
		}
		n, err := exportRows(ctx, tx, enc, `SELECT "`+strings.Join(cols, `", "`)+`" FROM "`+table+`" WHERE merchant_id = ?`+order, merchantID)
		if err != nil {
			return 0, fmt.Errorf("table %s: %w", table, err)
		}
		total += n
	}
	if err := enc.Encode(exportLine{End: true, Rows: total}); err != nil {
		return 0, err
	}
	return total, bw.Flush()
}

// tableColumns returns a table's columns but its integer row key, if it has one, and that key's name.
func tableColumns(ctx context.Context, tx *sql.Tx, table string) (cols []string, key string, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, upper(type), pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = rows.Close() }()
	var pks int
	var intKey string
	for rows.Next() {
		var name, typ string
		var pk int
		if err := rows.Scan(&name, &typ, &pk); err != nil {
			return nil, "", err
		}
		if pk > 0 {
			pks++
			if typ == "INTEGER" {
				intKey = name
			}
		}
		cols = append(cols, name)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(cols) == 0 {
		return nil, "", fmt.Errorf("no table %s", table)
	}
	// Only a lone INTEGER PRIMARY KEY is the row's key; in a WITHOUT ROWID table or with other key columns
	// it is data.
	if pks == 1 && intKey != "" {
		var withoutRowid int
		if err := tx.QueryRowContext(ctx, `SELECT instr(upper(sql), 'WITHOUT ROWID') FROM sqlite_master WHERE name = ?`, table).Scan(&withoutRowid); err != nil {
			return nil, "", err
		}
		if withoutRowid == 0 {
			return slices.DeleteFunc(cols, func(c string) bool { return c == intKey }), intKey, nil
		}
	}
	return cols, "", nil
}

// exportRows writes each row of the query as a row line and returns how many it wrote.
func exportRows(ctx context.Context, tx *sql.Tx, enc *json.Encoder, query string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	n := 0
	vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		line := exportLine{Row: make([]json.RawMessage, len(vals))}
		for i, v := range vals {
			if line.Row[i], err = encodeValue(v); err != nil {
				return 0, err
			}
		}
		if err := enc.Encode(line); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}

// encodeValue writes a SQLite value so that it reads back with its storage class: TEXT as a string, INTEGER as a
// number, NULL as null, REAL as {"real": x} and BLOB as {"blob": base64}.
func encodeValue(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil, int64, string:
		return json.Marshal(v)
	case float64:
		return json.Marshal(map[string]float64{"real": v})
	case []byte:
		return json.Marshal(map[string][]byte{"blob": v})
	default:
		return nil, fmt.Errorf("a value of type %T", v)
	}
}

func decodeValue(raw json.RawMessage) (any, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil, string:
		return v, nil
	case json.Number:
		return v.Int64()
	case map[string]any:
		var typed struct {
			Real *float64 `json:"real"`
			Blob []byte   `json:"blob"`
		}
		if err := json.Unmarshal(raw, &typed); err != nil {
			return nil, err
		}
		switch {
		case typed.Real != nil:
			return *typed.Real, nil
		case typed.Blob != nil:
			return typed.Blob, nil
		}
	}
	return nil, fmt.Errorf("not a value: %s", raw)
}

// ImportMerchant writes the merchant of an export (ExportMerchant) into the database at dst, creating or
// migrating it, in one transaction, and returns the merchant's ID and how many rows it wrote. It refuses a
// database a process has open (ErrInUse), one where the merchant has data already, an export of another schema
// version, a row of another merchant than the export's, and an export cut short; what it refuses writes nothing.
func ImportMerchant(ctx context.Context, r io.Reader, dst string) (string, int, error) {
	id, n, err := importMerchant(ctx, r, dst)
	if err != nil {
		return "", 0, fmt.Errorf("importing a merchant into %s: %w", dst, err)
	}
	return id, n, nil
}

func importMerchant(ctx context.Context, r io.Reader, dst string) (string, int, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var h exportHeader
	if err := dec.Decode(&h); err != nil {
		return "", 0, fmt.Errorf("reading the export's header: %w", err)
	}
	latest, err := latestMigration()
	if err != nil {
		return "", 0, err
	}
	switch {
	case h.Format != MerchantExportFormat || h.Version != 1:
		return "", 0, fmt.Errorf("not a merchant export of this version (format %q, version %d)", h.Format, h.Version)
	case h.MerchantID == "":
		return "", 0, errors.New("the export names no merchant")
	case h.SchemaVersion != latest:
		return "", 0, fmt.Errorf("the export has schema version %d, this version of parley writes %d: export with the same "+
			"version as the database it goes into", h.SchemaVersion, latest)
	}
	if _, err := os.Stat(dst); err == nil {
		if err := notInUse(ctx, dst); err != nil {
			return "", 0, err
		}
	}
	// Open creates or migrates the database; the import then writes with a connection of its own.
	s, err := Open(ctx, dst)
	if err != nil {
		return "", 0, err
	}
	if err := s.Close(); err != nil {
		return "", 0, err
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		return "", 0, err
	}
	db, err := openDB(ctx, dsn(abs, true), 1)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = db.Close() }()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = tx.Rollback() }()
	for _, table := range merchantTables {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM "`+table+`" WHERE merchant_id = ? LIMIT 1`, h.MerchantID).Scan(&one)
		if err == nil {
			return "", 0, fmt.Errorf("merchant %s has data in the database already (table %s): import into a database without it", h.MerchantID, table)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return "", 0, err
		}
	}
	n, err := importRows(ctx, tx, dec, h.MerchantID)
	if err != nil {
		return "", 0, err
	}
	return h.MerchantID, n, tx.Commit()
}

// importRows inserts the rows of the export's lines until its end line.
func importRows(ctx context.Context, tx *sql.Tx, dec *json.Decoder, merchantID string) (int, error) {
	var (
		stmt     *sql.Stmt
		table    string
		merchant = -1  // the merchant_id column of the table's rows
		width    int   // the table's columns
		order    []int // the export's column of each of the statement's
		n        int
	)
	defer func() {
		if stmt != nil {
			_ = stmt.Close()
		}
	}()
	for {
		var line exportLine
		if err := dec.Decode(&line); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errors.New("the export ends before its end line: it was cut short")
			}
			return 0, fmt.Errorf("reading the export after %d rows: %w", n, err)
		}
		switch {
		case line.End:
			if line.Rows != n {
				return 0, fmt.Errorf("the export says %d rows and holds %d", line.Rows, n)
			}
			return n, nil
		case line.Table != "":
			if !slices.Contains(merchantTables, line.Table) {
				return 0, fmt.Errorf("the export has a table %q that holds no merchant's data here", line.Table)
			}
			cols, _, err := tableColumns(ctx, tx, line.Table)
			if err != nil {
				return 0, err
			}
			if !slices.Equal(slices.Sorted(slices.Values(line.Columns)), slices.Sorted(slices.Values(cols))) {
				return 0, fmt.Errorf("table %s: the export's columns %v are not this database's %v", line.Table, line.Columns, cols)
			}
			if stmt != nil {
				_ = stmt.Close()
			}
			table, merchant, width = line.Table, slices.Index(line.Columns, "merchant_id"), len(line.Columns)
			// The statement names the database's own columns, and a table of merchantTables: the export's are only
			// checked equal to them.
			order = make([]int, len(cols))
			for i, c := range cols {
				order[i] = slices.Index(line.Columns, c)
			}
			marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
			insert := `INSERT INTO "` + table + `" ("` + strings.Join(cols, `", "`) + `") VALUES (` + marks + `)` //nolint:gosec // identifiers checked above
			if stmt, err = tx.PrepareContext(ctx, insert); err != nil {
				return 0, err
			}
		case line.Row != nil:
			if stmt == nil || len(line.Row) != width {
				return 0, errors.New("a row before its table's columns, or of another width")
			}
			values := make([]any, len(line.Row))
			for i, raw := range line.Row {
				v, err := decodeValue(raw)
				if err != nil {
					return 0, fmt.Errorf("table %s: %w", table, err)
				}
				values[i] = v
			}
			if merchant < 0 || values[merchant] != merchantID {
				return 0, fmt.Errorf("table %s: a row of another merchant than the export's %s", table, merchantID)
			}
			args := make([]any, len(order))
			for i, j := range order {
				args[i] = values[j]
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return 0, fmt.Errorf("table %s: %w", table, err)
			}
			n++
		default:
			return 0, errors.New("a line that is neither a table, a row nor the end")
		}
	}
}
