package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/gitsource"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/ingest"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// CreateSource adds a knowledge source to the merchant, due at once, within the plan's sources (ErrSourceLimit).
func (s *Service) CreateSource(ctx context.Context, m *tenant.Bundle, src store.KnowledgeSource) (store.KnowledgeSource, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	src.ID, src.MerchantID, src.Status = ids.New("src_"), m.MerchantID, store.SourcePending
	src.CreatedAt, src.UpdatedAt, src.NextSyncAt = now, now, now
	if err := createSource(ctx, s.store, src, m.Plan.SourcesLimit()); err != nil {
		return store.KnowledgeSource{}, err
	}
	s.wakeSyncs()
	return src, nil
}

// DeleteSource deletes a source and its items, or returns store.ErrNotFound, or ErrSourceDeclared for a source
// a KnowledgeSource object declares.
func (s *Service) DeleteSource(ctx context.Context, m *tenant.Bundle, id string) error {
	src, err := s.store.GetSource(ctx, m.MerchantID, id)
	if err != nil {
		return fmt.Errorf("deleting knowledge source %s: %w", id, err)
	}
	if src.Declared() {
		return ErrSourceDeclared
	}
	if err := deleteSource(ctx, s.store, m.MerchantID, id); err != nil {
		return err
	}
	s.knowledgeChanged(ctx, m.MerchantID)
	return nil
}

// RequestSync makes a source due at once and returns it, or returns store.ErrNotFound. A sync running goes on;
// the source is synced again after it.
func (s *Service) RequestSync(ctx context.Context, m *tenant.Bundle, id string) (store.KnowledgeSource, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	if err := s.store.Write(ctx, func(tx store.Tx) error { return tx.RequestSync(ctx, m.MerchantID, id, now) }); err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("requesting a sync of knowledge source %s: %w", id, err)
	}
	s.wakeSyncs()
	return s.store.GetSource(ctx, m.MerchantID, id)
}

// wakeSyncs tells the syncer a source is due, when one runs in this process.
func (s *Service) wakeSyncs() {
	if s.syncWake != nil {
		select {
		case s.syncWake <- struct{}{}:
		default:
		}
	}
}

// Readers are what syncs read sources with, by their type.
type Readers struct {
	// Web reads websites.
	Web *crawl.Crawler
	// Git reads Git repositories; without it, a Git source's sync fails saying so.
	Git *gitsource.Reader
}

// ErrNoGitReader fails the sync of a Git source in a runtime that reads none.
var ErrNoGitReader = errors.New("this runtime does not read Git repositories")

// read reads a source's pages (a Git repository's files) within scope and limits, as crawl.Crawler.Crawl does.
func (r Readers) read(ctx context.Context, src store.KnowledgeSource, limits crawl.Limits, known map[string]crawl.Known,
	handle func(crawl.Page) error) (crawl.Result, error) {
	scope := crawl.Scope{Include: src.Include, Exclude: src.Exclude}
	if src.Type == store.SourceGit {
		if r.Git == nil {
			return crawl.Result{}, ErrNoGitReader
		}
		return r.Git.Read(ctx, src.URL, src.Ref, scope, limits, known, handle)
	}
	return r.Web.Crawl(ctx, src.URL, scope, limits, known, handle)
}

// SyncSource reads a claimed source and brings its items in line with what it holds now: a page (a file of a
// Git repository) read becomes its sections' items (replacing the page's old ones at once), an unchanged page
// keeps its items, a page gone or no longer in scope loses them. Should the sync stop part-way (the site
// unreachable, a bound, an error of the store), the pages it did not reach keep their items. It ends the source's
// lease with the sync's outcome.
func (s *Service) SyncSource(ctx context.Context, m *tenant.Bundle, src store.KnowledgeSource, readers Readers, limits crawl.Limits) error {
	pages, err := s.store.ListSourcePages(ctx, m.MerchantID, src.ID)
	if err != nil {
		return err
	}
	known := make(map[string]crawl.Known, len(pages))
	old := make(map[string]store.SourcePage, len(pages))
	for _, p := range pages {
		old[p.URL] = p
		if p.Status == store.PageRead {
			known[p.URL] = crawl.Known{ETag: p.ETag, LastModified: p.LastModified, Links: p.Links}
		}
	}
	limits.MaxPages = min(src.MaxPages, m.Plan.SourcePagesLimit())
	sc := &sourceSync{s: s, m: m, src: src, old: old, lastProgress: s.now()}
	res, err := readers.read(ctx, src, limits, known, sc.page)
	if err == nil && res.Complete() {
		// Pages the sync did not reach are no longer linked from the site: their items go.
		for u, p := range old {
			if !res.Reached[u] {
				if err = removePage(ctx, s.store, p.MerchantID, p.SourceID, u); err != nil {
					break
				}
			}
		}
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	o := store.SyncOutcome{Status: store.SourceReady, PagesFound: res.Found, Pages: res.Read, At: now,
		Next: now.Add(max(src.SyncInterval, m.Plan.MinSourceSync())), Generation: src.Generation}
	switch {
	case ctx.Err() != nil:
		// The runtime is stopping: the sync is due again at once, for another replica or this one restarted.
		o.Status, o.Error, o.Next = store.SourceFailed, "interrupted: the runtime stopped", now
	case err != nil:
		o.Status, o.Error = store.SourceFailed, truncateError(err.Error())
	case res.Stopped != "":
		o.Error = truncateError(res.Stopped)
	case sc.refused != nil:
		o.Error = truncateError(sc.refused.Error())
	}
	if sc.changed {
		s.knowledgeChanged(ctx, m.MerchantID)
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.store.Write(ctx, func(tx store.Tx) error { return tx.FinishSync(ctx, m.MerchantID, src.ID, o) }); err != nil &&
		!errors.Is(err, store.ErrNotFound) { // deleted while it synced
		return fmt.Errorf("finishing the sync of knowledge source %s: %w", src.ID, err)
	}
	return nil
}

// truncateError bounds what a source keeps of an error: it is shown with the source in every listing.
func truncateError(s string) string {
	const maxErrorRunes = 500
	if r := []rune(s); len(r) > maxErrorRunes {
		return string(r[:maxErrorRunes]) + "…"
	}
	return s
}

// sourceSync is the state of one SyncSource.
type sourceSync struct {
	s   *Service
	m   *tenant.Bundle
	src store.KnowledgeSource
	old map[string]store.SourcePage
	// read counts the pages read or unchanged, found those handled.
	read, found int
	// changed says items were written, so that the index is reloaded.
	changed bool
	// refused is the first page refused by the plan's knowledge ceilings.
	refused      error
	lastProgress time.Time
}

// progressEvery is how often a running sync records its progress for the API and the dashboard.
const progressEvery = 2 * time.Second

// page records what the crawl made of one page.
func (sc *sourceSync) page(p crawl.Page) error {
	ctx := context.Background() // a page's write completes even when the sync is cancelled: it is one transaction
	st := sc.s.store
	now := sc.s.now().UTC().Truncate(time.Millisecond)
	rec := store.SourcePage{MerchantID: sc.m.MerchantID, SourceID: sc.src.ID, URL: p.URL, Status: store.PageRead,
		ETag: p.ETag, LastModified: p.LastModified, Links: p.Links, FetchedAt: now}
	prev, seen := sc.old[p.URL]
	sc.found++
	var err error
	switch {
	case p.Skipped != "" && p.Transient && seen:
		return nil // kept as it was: the page may be back next time
	case p.Skipped != "":
		rec.Status, rec.Reason, rec.Links = store.PageSkipped, p.Skipped, nil
		err = sc.replace(ctx, rec, nil)
	case p.NotModified:
		sc.read++
		rec.ContentHash, rec.Items = prev.ContentHash, prev.Items
		err = recordPage(ctx, st, rec)
	default:
		sc.read++
		err = sc.ingest(ctx, p, rec, prev, seen)
	}
	if err != nil {
		return err
	}
	if time.Since(sc.lastProgress) >= progressEvery {
		sc.lastProgress = time.Now()
		return st.Write(ctx, func(tx store.Tx) error {
			return tx.RecordSyncProgress(ctx, sc.m.MerchantID, sc.src.ID, sc.found, sc.read, now)
		})
	}
	return nil
}

// ingest turns a page read into its items; a page whose text did not change keeps them.
func (sc *sourceSync) ingest(ctx context.Context, p crawl.Page, rec, prev store.SourcePage, seen bool) error {
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil //nolint:nilerr // the crawler hands over parsed URLs only
	}
	sections, err := ingest.Extract(ctx, path.Base(u.Path), p.ContentType, p.Body, u)
	if err != nil {
		rec.Status, rec.Reason, rec.Links = store.PageSkipped, ingestReason(err), p.Links
		return sc.replace(ctx, rec, nil)
	}
	sum := sha256.New()
	for _, sec := range sections {
		sum.Write([]byte(sec.Title + "\x00" + sec.Anchor + "\x00" + sec.Text + "\x00"))
	}
	rec.ContentHash = hex.EncodeToString(sum.Sum(nil))
	if seen && prev.Status == store.PageRead && prev.ContentHash == rec.ContentHash {
		rec.Items = prev.Items
		return recordPage(ctx, sc.s.store, rec)
	}
	return sc.replace(ctx, rec, sc.items(u, sections))
}

// items makes a page's sections knowledge items of the source, cited with the page's URL and the section's
// anchor.
func (sc *sourceSync) items(u *url.URL, sections []ingest.Section) []store.Knowledge {
	now := sc.s.now().UTC().Truncate(time.Millisecond)
	items := make([]store.Knowledge, 0, len(sections))
	for i, sec := range sections {
		link := *u
		link.Fragment = sec.Anchor
		title := strings.TrimSpace(sec.Title)
		if title == "" {
			title = u.Path
		}
		if r := []rune(title); len(r) > MaxTitleRunes {
			title = string(r[:MaxTitleRunes-1]) + "…"
		}
		if sec.Page > 0 {
			// A PDF's page, which browsers' PDF viewers open at, as for an uploaded file.
			link.Fragment, title = "page="+strconv.Itoa(sec.Page), pageTitle(title, sec.Page)
		}
		text := sec.Text
		if r := []rune(text); len(r) > MaxContentRunes {
			text = string(r[:MaxContentRunes])
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		at := now.Add(time.Duration(i) * time.Millisecond) // keeps the page's order in listings
		items = append(items, store.Knowledge{ID: ids.New("kn_"), MerchantID: sc.m.MerchantID, Title: title, Content: text,
			URL: link.String(), SourceID: sc.src.ID, CreatedAt: at, UpdatedAt: at})
	}
	return items
}

// replace writes a page's items within the plan's ceilings; a page past them keeps its old items and is
// recorded as skipped, and the sync goes on with the other pages.
func (sc *sourceSync) replace(ctx context.Context, rec store.SourcePage, items []store.Knowledge) error {
	lim := KnowledgeLimitsOf(sc.m.Plan)
	err := replacePage(ctx, sc.s.store, rec, items, lim)
	if errors.Is(err, store.ErrKnowledgeLimit) || errors.Is(err, store.ErrKnowledgeSizeLimit) {
		if sc.refused == nil {
			sc.refused = fmt.Errorf("some pages were left out: %w", err)
		}
		rec.Status, rec.Reason, rec.Items = store.PageSkipped, "past the plan's knowledge ceiling: "+err.Error(), 0
		return recordPage(ctx, sc.s.store, rec)
	}
	if err == nil {
		sc.changed = true
	}
	return err
}

// ingestReason says why a page's document gave no items.
func ingestReason(err error) string {
	switch {
	case errors.Is(err, ingest.ErrUnsupported):
		return "not a document type Parley reads"
	case errors.Is(err, ingest.ErrNoText):
		return "no text in it"
	case errors.Is(err, ingest.ErrTooLarge):
		return "too large"
	}
	return "could not be read: " + truncateError(err.Error())
}

// SyncTenants are the merchants a Syncer serves: the runtime's registry of bundles.
type SyncTenants interface {
	Merchant(id string) (*tenant.Bundle, bool)
	All() []*tenant.Bundle
}

// SyncerConfig wires a Syncer.
type SyncerConfig struct {
	Service *Service
	Tenants SyncTenants
	Crawler *crawl.Crawler
	// Git reads Git sources; optional (ErrNoGitReader).
	Git *gitsource.Reader
	// Limits bound each crawl (the pages come from the plan and the source).
	Limits crawl.Limits
	// Workers bounds the syncs this process runs at once; PerMerchant one merchant's across the replicas.
	Workers, PerMerchant int
	// Poll is how often due syncs are looked for when nothing wakes the syncer.
	Poll   time.Duration
	Logger *slog.Logger
}

// Defaults of SyncerConfig.
const (
	DefaultSyncWorkers = 4
	DefaultSyncPoll    = 10 * time.Second
)

// Syncer runs the due syncs of every merchant's sources, claimed from the store so that on several replicas each
// runs once, with a bounded pool of workers of which one merchant holds at most PerMerchant.
type Syncer struct {
	cfg      SyncerConfig
	declared *DeclaredApplier
}

// NewSyncer builds a Syncer and has the service wake it when a source becomes due.
func NewSyncer(cfg SyncerConfig) (*Syncer, error) {
	if cfg.Service == nil || cfg.Tenants == nil || cfg.Crawler == nil {
		return nil, errors.New("chat: the syncer needs the service, the tenants and a crawler")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultSyncWorkers
	}
	if cfg.PerMerchant <= 0 {
		cfg.PerMerchant = max(1, cfg.Workers/2)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultSyncPoll
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits.MaxDuration <= 0 {
		cfg.Limits.MaxDuration = crawl.DefaultMaxDuration
	}
	cfg.Service.syncWake = make(chan struct{}, 1)
	return &Syncer{cfg: cfg, declared: NewDeclaredApplier(cfg.Service)}, nil
}

// Run syncs due sources until ctx ends, then waits for the syncs in flight, which stop at their next page. Before
// it looks for due syncs it applies the sources the merchants' bundles declare, whose changes reach the runtime
// within a poll.
func (y *Syncer) Run(ctx context.Context) {
	svc := y.cfg.Service
	sem := make(chan struct{}, y.cfg.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	// A lease outlasts the longest crawl, so that a sync in flight is never claimed twice.
	lease := y.cfg.Limits.MaxDuration + time.Minute
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-svc.syncWake:
		}
		if err := y.declared.Apply(ctx, y.cfg.Tenants.All()); err != nil && ctx.Err() == nil {
			y.cfg.Logger.Error("applying declared knowledge sources", "error", err)
		}
		if free := y.cfg.Workers - len(sem); free > 0 {
			claimed, err := svc.store.ClaimSources(ctx, svc.now(), lease, free, y.cfg.PerMerchant)
			if err != nil && ctx.Err() == nil {
				y.cfg.Logger.Error("claiming knowledge source syncs", "error", err)
			}
			for _, src := range claimed {
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer func() { <-sem; wg.Done() }()
					y.sync(ctx, src)
				}()
			}
		}
		timer.Reset(y.cfg.Poll)
	}
}

// sync runs one claimed sync, for a merchant the runtime serves.
func (y *Syncer) sync(ctx context.Context, src store.KnowledgeSource) {
	log := y.cfg.Logger.With("merchant", src.MerchantID, "source", src.ID)
	m, ok := y.cfg.Tenants.Merchant(src.MerchantID)
	if !ok || m.Suspended {
		// Not served here (yet, or any more): due again later, when its bundle may be back.
		now := y.cfg.Service.now()
		_ = y.cfg.Service.store.Write(ctx, func(tx store.Tx) error {
			return tx.FinishSync(ctx, src.MerchantID, src.ID, store.SyncOutcome{Status: store.SourceFailed,
				Error: "the merchant is not served or is suspended", At: now, Next: now.Add(time.Hour), Generation: src.Generation})
		})
		return
	}
	start := time.Now()
	if err := y.cfg.Service.SyncSource(ctx, m, src, Readers{Web: y.cfg.Crawler, Git: y.cfg.Git}, y.cfg.Limits); err != nil && ctx.Err() == nil {
		log.Error("syncing a knowledge source", "error", err)
		return
	}
	log.Info("synced a knowledge source", "took", time.Since(start).Round(time.Millisecond))
}
