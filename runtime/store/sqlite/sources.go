package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

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
	src, err := scanSource(s.reader.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM knowledge_sources
		WHERE merchant_id = ? AND id = ?`, merchantID, id))
	if err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("getting knowledge source %s: %w", id, err)
	}
	return src, nil
}

// ListSources returns the merchant's sources, newest first.
func (s *Store) ListSources(ctx context.Context, merchantID string) ([]store.KnowledgeSource, error) {
	list, err := queryList(ctx, s.reader, `SELECT `+sourceColumns+` FROM knowledge_sources WHERE merchant_id = ?
		ORDER BY created_at DESC, id DESC`, []any{merchantID}, scanSource)
	if err != nil {
		return nil, fmt.Errorf("listing knowledge sources: %w", err)
	}
	return list, nil
}

// ListSourcePages returns the pages of a source, by URL.
func (s *Store) ListSourcePages(ctx context.Context, merchantID, sourceID string) ([]store.SourcePage, error) {
	pages, err := queryList(ctx, s.reader, `SELECT `+pageColumns+` FROM source_pages
		WHERE merchant_id = ? AND source_id = ? ORDER BY url`, []any{merchantID, sourceID}, scanPage)
	if err != nil {
		return nil, fmt.Errorf("listing the pages of knowledge source %s: %w", sourceID, err)
	}
	return pages, nil
}

// ClaimSources leases the due sources, oldest due first, each merchant's up to perMerchant leases. SQLite's one
// writer serialises the claims, so that each due sync is claimed once.
func (s *Store) ClaimSources(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]store.KnowledgeSource, error) {
	at := storeutil.Millis(now)
	var claimed []store.KnowledgeSource
	err := s.write(ctx, func(tx *txn) error {
		var err error
		claimed, err = queryList(ctx, tx, `SELECT `+sourceColumns+` FROM knowledge_sources
			WHERE (merchant_id, id) IN (SELECT merchant_id, id FROM (`+fairSources+`) WHERE slot <= ?2)
			ORDER BY next_sync_at, id LIMIT ?3`, []any{at, perMerchant, limit}, scanSource)
		if err != nil {
			return err
		}
		for i := range claimed {
			claimed[i].Status = store.SourceSyncing
			if _, err := tx.ExecContext(ctx, `UPDATE knowledge_sources SET status = 'syncing', lease_until = ?1,
				next_sync_at = ?1, pages_found = 0, pages = 0, updated_at = ?2 WHERE merchant_id = ?3 AND id = ?4`,
				storeutil.Millis(now.Add(lease)), at, claimed[i].MerchantID, claimed[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claiming knowledge sources: %w", err)
	}
	return claimed, nil
}

// fairSources numbers the due, unleased sources of each merchant after the leases it holds: a source whose slot
// is past the merchant's share waits. ?1 is now.
const fairSources = `SELECT d.merchant_id, d.id,
	ROW_NUMBER() OVER (PARTITION BY d.merchant_id ORDER BY d.next_sync_at, d.id) +
		(SELECT COUNT(*) FROM knowledge_sources l WHERE l.merchant_id = d.merchant_id AND l.lease_until > ?1) AS slot
	FROM knowledge_sources d WHERE d.next_sync_at <= ?1 AND d.lease_until <= ?1`

// CountSources returns how many sources the merchant has.
func (tx writeTx) CountSources(ctx context.Context, merchantID string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM knowledge_sources WHERE merchant_id = ?`, merchantID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting knowledge sources: %w", err)
	}
	return n, nil
}

// InsertSource stores a new source.
func (tx writeTx) InsertSource(ctx context.Context, src store.KnowledgeSource) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO knowledge_sources (merchant_id, id, type, url, ref, include, exclude,
		max_pages, sync_interval_s, status, next_sync_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		src.MerchantID, src.ID, src.Type, src.URL, src.Ref, strings.Join(src.Include, "\n"), strings.Join(src.Exclude, "\n"),
		src.MaxPages, int64(src.SyncInterval/time.Second), src.Status, storeutil.Millis(src.NextSyncAt),
		storeutil.Millis(src.CreatedAt), storeutil.Millis(src.UpdatedAt))
	if err != nil {
		return fmt.Errorf("inserting knowledge source: %w", err)
	}
	return nil
}

// PutDeclaredSource inserts a declared source, or updates one stored at another generation.
func (tx writeTx) PutDeclaredSource(ctx context.Context, src store.KnowledgeSource) (bool, error) {
	n, err := affected(tx.ExecContext(ctx, `INSERT INTO knowledge_sources (merchant_id, id, type, url, ref, include,
		exclude, max_pages, sync_interval_s, status, next_sync_at, generation, created_at, updated_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10, ?11, ?12, ?12)
		ON CONFLICT (merchant_id, id) DO UPDATE SET type = excluded.type, url = excluded.url, ref = excluded.ref,
			include = excluded.include, exclude = excluded.exclude, max_pages = excluded.max_pages,
			sync_interval_s = excluded.sync_interval_s, next_sync_at = excluded.next_sync_at,
			generation = excluded.generation, updated_at = excluded.updated_at
		WHERE knowledge_sources.generation != excluded.generation`,
		src.MerchantID, src.ID, src.Type, src.URL, src.Ref, strings.Join(src.Include, "\n"), strings.Join(src.Exclude, "\n"),
		src.MaxPages, int64(src.SyncInterval/time.Second), storeutil.Millis(src.NextSyncAt), src.Generation,
		storeutil.Millis(src.UpdatedAt)))
	if err != nil {
		return false, fmt.Errorf("storing declared knowledge source %s: %w", src.ID, err)
	}
	return n > 0, nil
}

// RequestSync makes the source due at at.
func (tx writeTx) RequestSync(ctx context.Context, merchantID, id string, at time.Time) error {
	return mustAffect(tx.ExecContext(ctx, `UPDATE knowledge_sources SET next_sync_at = ?1, updated_at = ?1
		WHERE merchant_id = ?2 AND id = ?3`, storeutil.Millis(at), merchantID, id))
}

// RecordSyncProgress records the running sync's counts.
func (tx writeTx) RecordSyncProgress(ctx context.Context, merchantID, id string, found, read int, at time.Time) error {
	return mustAffect(tx.ExecContext(ctx, `UPDATE knowledge_sources SET pages_found = ?, pages = ?, updated_at = ?
		WHERE merchant_id = ? AND id = ?`, found, read, storeutil.Millis(at), merchantID, id))
}

// FinishSync records a sync's end and counts the source's items. A claim moved next_sync_at to the lease's end;
// one before it is a sync requested while this one ran, which stays due.
func (tx writeTx) FinishSync(ctx context.Context, merchantID, id string, o store.SyncOutcome) error {
	return mustAffect(tx.ExecContext(ctx, `UPDATE knowledge_sources SET status = ?1, error = ?2, pages_found = ?3,
		pages = ?4, last_synced_at = ?5, next_sync_at = CASE WHEN next_sync_at < lease_until THEN next_sync_at ELSE ?6 END, lease_until = 0, updated_at = ?5,
		items = (SELECT COUNT(*) FROM knowledge k WHERE k.merchant_id = ?7 AND k.source_id = ?8),
		synced_generation = ?9, last_outcome = ?1
		WHERE merchant_id = ?7 AND id = ?8`,
		o.Status, o.Error, o.PagesFound, o.Pages, storeutil.Millis(o.At), storeutil.Millis(o.Next), merchantID, id, o.Generation))
}

// DeleteSource deletes a source, its pages and its items.
func (tx writeTx) DeleteSource(ctx context.Context, merchantID, id string) (int, error) {
	if err := mustAffect(tx.ExecContext(ctx, `DELETE FROM knowledge_sources WHERE merchant_id = ? AND id = ?`,
		merchantID, id)); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM source_pages WHERE merchant_id = ? AND source_id = ?`,
		merchantID, id); err != nil {
		return 0, fmt.Errorf("deleting the pages of knowledge source %s: %w", id, err)
	}
	n, err := affected(tx.ExecContext(ctx, `DELETE FROM knowledge WHERE merchant_id = ? AND source_id = ?`, merchantID, id))
	if err != nil {
		return 0, fmt.Errorf("deleting the items of knowledge source %s: %w", id, err)
	}
	return int(n), nil
}

// PutSourcePage stores what a sync knows of a page.
func (tx writeTx) PutSourcePage(ctx context.Context, p store.SourcePage) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO source_pages (`+pageColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (merchant_id, source_id, url) DO UPDATE SET status = excluded.status, reason = excluded.reason,
			etag = excluded.etag, last_modified = excluded.last_modified, content_hash = excluded.content_hash,
			links = excluded.links, items = excluded.items, fetched_at = excluded.fetched_at`,
		p.MerchantID, p.SourceID, p.URL, p.Status, p.Reason, p.ETag, p.LastModified, p.ContentHash,
		strings.Join(p.Links, "\n"), p.Items, storeutil.Millis(p.FetchedAt))
	if err != nil {
		return fmt.Errorf("storing page %s: %w", p.URL, err)
	}
	return nil
}

// DeleteSourcePage forgets a page of a source.
func (tx writeTx) DeleteSourcePage(ctx context.Context, merchantID, sourceID, url string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM source_pages WHERE merchant_id = ? AND source_id = ? AND url = ?`,
		merchantID, sourceID, url)
	return err
}

// DeletePageKnowledge deletes the items the source made of the page at url: their URL is the page's, or the
// page's with a fragment (a section's anchor). substr rather than LIKE: a URL may hold % and _.
func (tx writeTx) DeletePageKnowledge(ctx context.Context, merchantID, sourceID, url string) (int, error) {
	n, err := affected(tx.ExecContext(ctx, `DELETE FROM knowledge WHERE merchant_id = ?1 AND source_id = ?2
		AND (url = ?3 OR substr(url, 1, length(?3) + 1) = ?3 || '#')`, merchantID, sourceID, url))
	if err != nil {
		return 0, fmt.Errorf("deleting the items of page %s: %w", url, err)
	}
	return int(n), nil
}

// scanSource reads sourceColumns; no row is store.ErrNotFound.
func scanSource(row storeutil.Scanner) (store.KnowledgeSource, error) {
	var (
		src                                      store.KnowledgeSource
		include, exclude                         string
		interval, synced, next, created, updated int64
	)
	err := row.Scan(&src.MerchantID, &src.ID, &src.Type, &src.URL, &src.Ref, &include, &exclude, &src.MaxPages,
		&interval, &src.Status, &src.PagesFound, &src.Pages, &src.Items, &synced, &next, &src.Error, &src.Generation,
		&src.SyncedGeneration, &src.LastOutcome, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.KnowledgeSource{}, store.ErrNotFound
	}
	if err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("reading knowledge source: %w", err)
	}
	src.Include, src.Exclude = lines(include), lines(exclude)
	src.SyncInterval = time.Duration(interval) * time.Second
	if synced != 0 {
		src.LastSyncedAt = storeutil.FromMillis(synced)
	}
	src.NextSyncAt, src.CreatedAt, src.UpdatedAt = storeutil.FromMillis(next), storeutil.FromMillis(created), storeutil.FromMillis(updated)
	return src, nil
}

// scanPage reads pageColumns.
func scanPage(row storeutil.Scanner) (store.SourcePage, error) {
	var (
		p       store.SourcePage
		links   string
		fetched int64
	)
	err := row.Scan(&p.MerchantID, &p.SourceID, &p.URL, &p.Status, &p.Reason, &p.ETag, &p.LastModified, &p.ContentHash,
		&links, &p.Items, &fetched)
	if err != nil {
		return store.SourcePage{}, fmt.Errorf("reading source page: %w", err)
	}
	p.Links, p.FetchedAt = lines(links), storeutil.FromMillis(fetched)
	return p, nil
}

// lines splits what the store keeps one a line; none for an empty text.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
