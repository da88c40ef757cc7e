package store

import (
	"context"
	"time"
)

// The types of a knowledge source.
const (
	// SourceWebsite is a website, read from a start address or a sitemap.
	SourceWebsite = "website"
	// SourceGit is a Git repository of Markdown files.
	SourceGit = "git"
)

// The statuses of a knowledge source.
const (
	// SourcePending has never been synced.
	SourcePending = "pending"
	// SourceSyncing is being synced by one of the runtime's replicas.
	SourceSyncing = "syncing"
	// SourceReady finished its last sync.
	SourceReady = "ready"
	// SourceFailed could not finish its last sync; the items of its earlier syncs stay.
	SourceFailed = "failed"
)

// KnowledgeSource is where knowledge items come from and are kept in sync with: a website or a Git repository.
// The items a source makes carry its ID (Knowledge.SourceID); a sync replaces only those, never an item typed by
// hand, and the source's deletion deletes them.
type KnowledgeSource struct {
	ID         string
	MerchantID string
	// Type is SourceWebsite or SourceGit.
	Type string
	// URL is the website's start address (or its sitemap), or the repository's.
	URL string
	// Ref is the Git branch or tag; empty for a website and for the repository's default branch.
	Ref string
	// Include and Exclude are path patterns: a page is read when it matches one of Include (or Include is empty)
	// and none of Exclude.
	Include, Exclude []string
	// MaxPages bounds the pages one sync reads.
	MaxPages int
	// SyncInterval is the time between the end of a sync and the start of the next.
	SyncInterval time.Duration
	// Status is one of SourcePending, SourceSyncing, SourceReady and SourceFailed.
	Status string
	// PagesFound counts the pages the running or last sync found; Pages those it read (unchanged ones included).
	PagesFound, Pages int
	// Items counts the items the source holds, as of its last sync.
	Items int
	// LastSyncedAt is when the last sync ended; zero before the first.
	LastSyncedAt time.Time
	// NextSyncAt is when the next sync is due.
	NextSyncAt time.Time
	// Error says why the last sync failed; empty when it did not.
	Error string
	// Generation is the generation of the KnowledgeSource object a declared source stands for (the tenant
	// bundle's), and 0 for a source made through the API or the dashboard, which alone may edit or delete it.
	Generation int64
	// SyncedGeneration is the Generation the last finished sync read; LastOutcome how it ended (SourceReady or
	// SourceFailed), empty before the first. They stay while the next sync runs, for the operator's report.
	SyncedGeneration int64
	LastOutcome      string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Declared says whether a source stands for a KnowledgeSource object, which only its tenant bundle changes.
func (s KnowledgeSource) Declared() bool { return s.Generation > 0 }

// The outcomes of a page of a source.
const (
	// PageRead is a page whose text became items (or was unchanged since it did).
	PageRead = "read"
	// PageSkipped is a page left out, with its reason.
	PageSkipped = "skipped"
)

// SourcePage is what the last syncs know of one page of a source.
type SourcePage struct {
	MerchantID string
	SourceID   string
	// URL is the page's address, without a fragment.
	URL string
	// Status is PageRead or PageSkipped.
	Status string
	// Reason says why a page was skipped.
	Reason string
	// ETag and LastModified are the validators the page was answered with, sent back on the next sync so that an
	// unchanged page costs the site a 304.
	ETag, LastModified string
	// ContentHash is the SHA-256 of the page's text, so that a page re-sent unchanged leaves its items alone.
	ContentHash string
	// Links are the pages of the site the page links to, followed from it when it is unchanged.
	Links []string
	// Items counts the items the page made.
	Items     int
	FetchedAt time.Time
}

// SyncOutcome is how a sync ended.
type SyncOutcome struct {
	// Status is SourceReady or SourceFailed.
	Status string
	// Error says why it failed.
	Error string
	// PagesFound and Pages are the sync's counts.
	PagesFound, Pages int
	// At is when it ended; Next when the next one is due.
	At, Next time.Time
	// Generation is the source's Generation when the sync was claimed: the spec it read.
	Generation int64
}

// SourceReader reads a merchant's knowledge sources.
type SourceReader interface {
	// GetSource returns one source or ErrNotFound.
	GetSource(ctx context.Context, merchantID, id string) (KnowledgeSource, error)
	// ListSources returns the merchant's sources, newest first.
	ListSources(ctx context.Context, merchantID string) ([]KnowledgeSource, error)
	// ListSourcePages returns what the syncs of the merchant's source know of its pages, by URL; none for a
	// source that does not exist.
	ListSourcePages(ctx context.Context, merchantID, sourceID string) ([]SourcePage, error)
}

// SourceTx is a write transaction's statements on knowledge sources.
type SourceTx interface {
	// CountSources returns how many sources the merchant has.
	CountSources(ctx context.Context, merchantID string) (int, error)
	// InsertSource stores a new source.
	InsertSource(ctx context.Context, s KnowledgeSource) error
	// PutDeclaredSource stores a declared source (s.Generation > 0) as new, due at s.NextSyncAt, or, when one
	// with its ID is stored at another generation, replaces its type, address, ref, patterns, pages and interval,
	// makes it declared and due at s.NextSyncAt (a sync running keeps its lease). It reports whether it wrote.
	PutDeclaredSource(ctx context.Context, s KnowledgeSource) (bool, error)
	// RequestSync makes the source due at at, or returns ErrNotFound. A sync running keeps its lease.
	RequestSync(ctx context.Context, merchantID, id string, at time.Time) error
	// RecordSyncProgress records the pages the running sync found and read so far, or returns ErrNotFound.
	RecordSyncProgress(ctx context.Context, merchantID, id string, found, read int, at time.Time) error
	// FinishSync records the end of a sync, counts the source's items, due the next sync and ends the lease, or
	// returns ErrNotFound.
	FinishSync(ctx context.Context, merchantID, id string, o SyncOutcome) error
	// DeleteSource deletes a source, its pages and its items, and returns how many items it deleted, or
	// ErrNotFound.
	DeleteSource(ctx context.Context, merchantID, id string) (items int, err error)
	// PutSourcePage stores what a sync knows of a page, replacing what an earlier one knew.
	PutSourcePage(ctx context.Context, p SourcePage) error
	// DeleteSourcePage forgets a page of a source.
	DeleteSourcePage(ctx context.Context, merchantID, sourceID, url string) error
	// DeletePageKnowledge deletes the items the source made of the page at url (their URLs are the page's, with
	// or without a fragment) and returns how many it deleted.
	DeletePageKnowledge(ctx context.Context, merchantID, sourceID, url string) (int, error)
}
