package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// sourceColumns are a knowledge source's columns, read by scanSource.
const sourceColumns = `merchant_id, id, type, url, ref, include, exclude, max_pages, sync_interval_s, status,
	pages_found, pages, items, last_synced_at, next_sync_at, error, generation, synced_generation, last_outcome,
	created_at, updated_at`

// pageColumns are a source page's columns, read by scanPage.
const pageColumns = `merchant_id, source_id, url, status, reason, etag, last_modified, content_hash, links, items,
	fetched_at`

// GetSource returns one source or store.ErrNotFound.
func (s *Store) GetSource(ctx context.Context, merchantID, id string) (store.KnowledgeSource, error) {
	src, err := scanSource(s.pool.QueryRow(ctx, `SELECT `+sourceColumns+` FROM knowledge_sources
		WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("getting knowledge source %s: %w", id, err)
	}
	return src, nil
}

// ListSources returns the merchant's sources, newest first.
func (s *Store) ListSources(ctx context.Context, merchantID string) ([]store.KnowledgeSource, error) {
	list, err := queryList(ctx, s.pool, `SELECT `+sourceColumns+` FROM knowledge_sources WHERE merchant_id = $1
		ORDER BY created_at DESC, id DESC`, []any{merchantID}, scanSource)
	if err != nil {
		return nil, fmt.Errorf("listing knowledge sources: %w", err)
	}
	return list, nil
}

// ListSourcePages returns the pages of a source, by URL.
func (s *Store) ListSourcePages(ctx context.Context, merchantID, sourceID string) ([]store.SourcePage, error) {
	pages, err := queryList(ctx, s.pool, `SELECT `+pageColumns+` FROM source_pages
		WHERE merchant_id = $1 AND source_id = $2 ORDER BY url`, []any{merchantID, sourceID}, scanPage)
	if err != nil {
		return nil, fmt.Errorf("listing the pages of knowledge source %s: %w", sourceID, err)
	}
	return pages, nil
}

// ClaimSources leases the due sources, oldest due first, each merchant's up to perMerchant leases. SKIP LOCKED
// lets replicas claiming at once take disjoint sources, and a source another replica claimed and committed
// meanwhile fails the lease condition when it is locked, so that each due sync is claimed once.
func (s *Store) ClaimSources(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]store.KnowledgeSource, error) {
	// One statement: it is its own transaction.
	claimed, err := queryList(ctx, s.pool, `
		WITH fair AS (
			SELECT d.merchant_id, d.id,
				ROW_NUMBER() OVER (PARTITION BY d.merchant_id ORDER BY d.next_sync_at, d.id) +
					(SELECT COUNT(*) FROM knowledge_sources l WHERE l.merchant_id = d.merchant_id AND l.lease_until > $1) AS slot
			FROM knowledge_sources d WHERE d.next_sync_at <= $1 AND d.lease_until <= $1),
		due AS (
			SELECT x.merchant_id, x.id FROM knowledge_sources x JOIN fair f ON f.merchant_id = x.merchant_id AND f.id = x.id
			WHERE f.slot <= $3 AND x.next_sync_at <= $1 AND x.lease_until <= $1
			ORDER BY x.next_sync_at, x.id LIMIT $4 FOR UPDATE OF x SKIP LOCKED)
		UPDATE knowledge_sources k SET status = 'syncing', lease_until = $2, next_sync_at = $2, pages_found = 0, pages = 0, updated_at = $1
		FROM due WHERE k.merchant_id = due.merchant_id AND k.id = due.id
		RETURNING `+prefixed("k.", sourceColumns), []any{stamp(now), stamp(now.Add(lease)), perMerchant, limit}, scanSource)
	if err != nil {
		return nil, fmt.Errorf("claiming knowledge sources: %w", err)
	}
	slices.SortStableFunc(claimed, func(a, b store.KnowledgeSource) int { return a.NextSyncAt.Compare(b.NextSyncAt) })
	return claimed, nil
}

// prefixed qualifies each of the comma-separated columns with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// CountSources returns how many sources the merchant has.
func (tx writeTx) CountSources(ctx context.Context, merchantID string) (int, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM knowledge_sources WHERE merchant_id = $1`, merchantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting knowledge sources: %w", err)
	}
	return n, nil
}

// InsertSource stores a new source.
func (tx writeTx) InsertSource(ctx context.Context, src store.KnowledgeSource) error {
	_, err := tx.Exec(ctx, `INSERT INTO knowledge_sources (merchant_id, id, type, url, ref, include, exclude,
		max_pages, sync_interval_s, status, next_sync_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		src.MerchantID, src.ID, src.Type, src.URL, src.Ref, strings.Join(src.Include, "\n"), strings.Join(src.Exclude, "\n"),
		src.MaxPages, int64(src.SyncInterval/time.Second), src.Status, stamp(src.NextSyncAt), stamp(src.CreatedAt),
		stamp(src.UpdatedAt))
	if err != nil {
		return fmt.Errorf("inserting knowledge source: %w", err)
	}
	return nil
}

// PutDeclaredSource inserts a declared source, or updates one stored at another generation.
func (tx writeTx) PutDeclaredSource(ctx context.Context, src store.KnowledgeSource) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO knowledge_sources (merchant_id, id, type, url, ref, include,
		exclude, max_pages, sync_interval_s, status, next_sync_at, generation, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $12, $12)
		ON CONFLICT (merchant_id, id) DO UPDATE SET type = excluded.type, url = excluded.url, ref = excluded.ref,
			include = excluded.include, exclude = excluded.exclude, max_pages = excluded.max_pages,
			sync_interval_s = excluded.sync_interval_s, next_sync_at = excluded.next_sync_at,
			generation = excluded.generation, updated_at = excluded.updated_at
		WHERE knowledge_sources.generation != excluded.generation`,
		src.MerchantID, src.ID, src.Type, src.URL, src.Ref, strings.Join(src.Include, "\n"), strings.Join(src.Exclude, "\n"),
		src.MaxPages, int64(src.SyncInterval/time.Second), stamp(src.NextSyncAt), src.Generation, stamp(src.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("storing declared knowledge source %s: %w", src.ID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// RequestSync makes the source due at at.
func (tx writeTx) RequestSync(ctx context.Context, merchantID, id string, at time.Time) error {
	return mustAffect(tx.Exec(ctx, `UPDATE knowledge_sources SET next_sync_at = $1, updated_at = $1
		WHERE merchant_id = $2 AND id = $3`, stamp(at), merchantID, id))
}

// RecordSyncProgress records the running sync's counts.
func (tx writeTx) RecordSyncProgress(ctx context.Context, merchantID, id string, found, read int, at time.Time) error {
	return mustAffect(tx.Exec(ctx, `UPDATE knowledge_sources SET pages_found = $1, pages = $2, updated_at = $3
		WHERE merchant_id = $4 AND id = $5`, found, read, stamp(at), merchantID, id))
}

// FinishSync records a sync's end and counts the source's items. A claim moved next_sync_at to the lease's end;
// one before it is a sync requested while this one ran, which stays due.
func (tx writeTx) FinishSync(ctx context.Context, merchantID, id string, o store.SyncOutcome) error {
	return mustAffect(tx.Exec(ctx, `UPDATE knowledge_sources SET status = $1, error = $2, pages_found = $3,
		pages = $4, last_synced_at = $5, next_sync_at = CASE WHEN next_sync_at < lease_until THEN next_sync_at ELSE $6 END, lease_until = 'epoch',
		updated_at = $5, items = (SELECT COUNT(*) FROM knowledge k WHERE k.merchant_id = $7 AND k.source_id = $8),
		synced_generation = $9, last_outcome = $1
		WHERE merchant_id = $7 AND id = $8`,
		o.Status, o.Error, o.PagesFound, o.Pages, stamp(o.At), stamp(o.Next), merchantID, id, o.Generation))
}

// DeleteSource deletes a source, its pages and its items.
func (tx writeTx) DeleteSource(ctx context.Context, merchantID, id string) (int, error) {
	if err := mustAffect(tx.Exec(ctx, `DELETE FROM knowledge_sources WHERE merchant_id = $1 AND id = $2`,
		merchantID, id)); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM source_pages WHERE merchant_id = $1 AND source_id = $2`, merchantID, id); err != nil {
		return 0, fmt.Errorf("deleting the pages of knowledge source %s: %w", id, err)
	}
	tag, err := tx.Exec(ctx, `DELETE FROM knowledge WHERE merchant_id = $1 AND source_id = $2`, merchantID, id)
	if err != nil {
		return 0, fmt.Errorf("deleting the items of knowledge source %s: %w", id, err)
	}
	return int(tag.RowsAffected()), nil
}

// PutSourcePage stores what a sync knows of a page.
func (tx writeTx) PutSourcePage(ctx context.Context, p store.SourcePage) error {
	_, err := tx.Exec(ctx, `INSERT INTO source_pages (`+pageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (merchant_id, source_id, url) DO UPDATE SET status = excluded.status, reason = excluded.reason,
			etag = excluded.etag, last_modified = excluded.last_modified, content_hash = excluded.content_hash,
			links = excluded.links, items = excluded.items, fetched_at = excluded.fetched_at`,
		p.MerchantID, p.SourceID, p.URL, p.Status, p.Reason, p.ETag, p.LastModified, p.ContentHash,
		strings.Join(p.Links, "\n"), p.Items, stamp(p.FetchedAt))
	if err != nil {
		return fmt.Errorf("storing page %s: %w", p.URL, err)
	}
	return nil
}

// DeleteSourcePage forgets a page of a source.
func (tx writeTx) DeleteSourcePage(ctx context.Context, merchantID, sourceID, url string) error {
	_, err := tx.Exec(ctx, `DELETE FROM source_pages WHERE merchant_id = $1 AND source_id = $2 AND url = $3`,
		merchantID, sourceID, url)
	return err
}

// DeletePageKnowledge deletes the items the source made of the page at url: their URL is the page's, or the
// page's with a fragment (a section's anchor). left() rather than LIKE: a URL may hold % and _.
func (tx writeTx) DeletePageKnowledge(ctx context.Context, merchantID, sourceID, url string) (int, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM knowledge WHERE merchant_id = $1 AND source_id = $2
		AND (url = $3 OR left(url, length($3) + 1) = $3 || '#')`, merchantID, sourceID, url)
	if err != nil {
		return 0, fmt.Errorf("deleting the items of page %s: %w", url, err)
	}
	return int(tag.RowsAffected()), nil
}

// scanSource reads sourceColumns; no row is store.ErrNotFound.
func scanSource(row storeutil.Scanner) (store.KnowledgeSource, error) {
	var (
		src              store.KnowledgeSource
		include, exclude string
		interval         int64
	)
	err := row.Scan(&src.MerchantID, &src.ID, &src.Type, &src.URL, &src.Ref, &include, &exclude, &src.MaxPages,
		&interval, &src.Status, &src.PagesFound, &src.Pages, &src.Items, &src.LastSyncedAt, &src.NextSyncAt, &src.Error,
		&src.Generation, &src.SyncedGeneration, &src.LastOutcome, &src.CreatedAt, &src.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.KnowledgeSource{}, store.ErrNotFound
	}
	if err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("reading knowledge source: %w", err)
	}
	src.Include, src.Exclude = lines(include), lines(exclude)
	src.SyncInterval = time.Duration(interval) * time.Second
	if src.LastSyncedAt.Unix() == 0 {
		src.LastSyncedAt = time.Time{}
	}
	src.LastSyncedAt, src.NextSyncAt = utcOrZero(src.LastSyncedAt), src.NextSyncAt.UTC()
	src.CreatedAt, src.UpdatedAt = src.CreatedAt.UTC(), src.UpdatedAt.UTC()
	return src, nil
}

// utcOrZero is t in UTC, the zero time kept as it is.
func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// scanPage reads pageColumns.
func scanPage(row storeutil.Scanner) (store.SourcePage, error) {
	var (
		p     store.SourcePage
		links string
	)
	err := row.Scan(&p.MerchantID, &p.SourceID, &p.URL, &p.Status, &p.Reason, &p.ETag, &p.LastModified, &p.ContentHash,
		&links, &p.Items, &p.FetchedAt)
	if err != nil {
		return store.SourcePage{}, fmt.Errorf("reading source page: %w", err)
	}
	p.Links, p.FetchedAt = lines(links), p.FetchedAt.UTC()
	return p, nil
}

// lines splits what the store keeps one a line; none for an empty text.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
