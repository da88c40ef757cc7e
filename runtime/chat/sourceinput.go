package chat

import (
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// SourceInput is a knowledge source as a merchant asks for it, through the API or the dashboard.
type SourceInput struct {
	// Type is store.SourceWebsite (the default) or store.SourceGit.
	Type string
	// URL is the website's start address or sitemap, or the Git repository's HTTPS address.
	URL string
	// Ref is a Git source's branch or tag (the default branch when empty); a website has none.
	Ref              string
	Include, Exclude []string
	// MaxPages is 0 for the plan's pages per source.
	MaxPages int
	// SyncInterval is a Go duration ("24h", "90m"); empty is DefaultSyncInterval.
	SyncInterval string
}

// The bounds of a knowledge source.
const (
	// DefaultSyncInterval is how often a source is synced when its merchant does not say: daily, as the products
	// merchants compare Parley with.
	DefaultSyncInterval = 24 * time.Hour
	// MaxSyncInterval is the longest interval: a source is synced at least monthly.
	MaxSyncInterval = 30 * 24 * time.Hour
	// MaxSourcePatterns bounds the include and exclude patterns of a source, each.
	MaxSourcePatterns = 20
	// MaxPatternBytes bounds one pattern.
	MaxPatternBytes = 200
	// MaxRefBytes bounds a Git ref.
	MaxRefBytes = 200
)

// The fields of a knowledge source, as FieldError names them (the API's JSON names); FieldURL is the address.
const (
	FieldType         = "type"
	FieldRef          = "ref"
	FieldInclude      = "include"
	FieldExclude      = "exclude"
	FieldMaxPages     = "max_pages"
	FieldSyncInterval = "sync_interval"
)

// The problems SourceInput.Validate reports besides Validate's.
const (
	// ProblemNotSourceType is a type other than website and git.
	ProblemNotSourceType Problem = "not_source_type"
	// ProblemNotGitRef is a ref on a website, or one no Git branch or tag could be named (spaces, "..").
	ProblemNotGitRef Problem = "not_git_ref"
	// ProblemNotPattern is a pattern that is not a path pattern (crawl.ValidPattern).
	ProblemNotPattern Problem = "not_pattern"
	// ProblemOutOfRange is a number or duration outside [Limit, Length]: for max_pages 1 to the plan's pages,
	// for sync_interval (in seconds) the plan's floor to MaxSyncInterval.
	ProblemOutOfRange Problem = "out_of_range"
	// ProblemNotDuration is an interval that is not a duration ("24h", "90m").
	ProblemNotDuration Problem = "not_duration"
)

// Validate checks in against the plan and returns the source to store (without its ID, merchant and times), or
// every problem found, in the order of the fields.
func (in SourceInput) Validate(plan tenant.Plan) (store.KnowledgeSource, []FieldError) {
	var problems []FieldError
	add := func(field string, index int, p Problem, limit, length int) {
		problems = append(problems, FieldError{Field: field, Index: index, Problem: p, Limit: limit, Length: length})
	}
	src := store.KnowledgeSource{Type: strings.TrimSpace(in.Type), URL: strings.TrimSpace(in.URL),
		Ref: strings.TrimSpace(in.Ref), Status: store.SourcePending}
	if src.Type == "" {
		src.Type = store.SourceWebsite
	}
	if src.Type != store.SourceWebsite && src.Type != store.SourceGit {
		add(FieldType, -1, ProblemNotSourceType, 0, 0)
	}
	switch u, err := url.Parse(src.URL); {
	case src.URL == "":
		add(FieldURL, -1, ProblemMissing, 0, 0)
	case !storable(src.URL):
		add(FieldURL, -1, ProblemNotText, 0, 0)
	case len(src.URL) > MaxURLBytes:
		add(FieldURL, -1, ProblemTooLong, MaxURLBytes, len(src.URL))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil:
		add(FieldURL, -1, ProblemNotHTTPURL, 0, 0)
	}
	switch {
	case src.Ref != "" && src.Type != store.SourceGit:
		add(FieldRef, -1, ProblemNotGitRef, 0, 0)
	case !storable(src.Ref) || strings.ContainsFunc(src.Ref, unicode.IsSpace) || strings.Contains(src.Ref, ".."):
		add(FieldRef, -1, ProblemNotGitRef, 0, 0)
	case len(src.Ref) > MaxRefBytes:
		add(FieldRef, -1, ProblemTooLong, MaxRefBytes, len(src.Ref))
	}
	patterns := func(field string, in []string) []string {
		if len(in) > MaxSourcePatterns {
			add(field, -1, ProblemTooMany, MaxSourcePatterns, len(in))
		}
		var out []string
		for i, p := range in {
			p = strings.TrimSpace(p)
			switch {
			case len(p) > MaxPatternBytes:
				add(field, i, ProblemTooLong, MaxPatternBytes, len(p))
			case !storable(p) || strings.ContainsAny(p, "\r\n") || crawl.ValidPattern(p) != nil:
				add(field, i, ProblemNotPattern, 0, 0)
			}
			out = append(out, p)
		}
		return out
	}
	src.Include, src.Exclude = patterns(FieldInclude, in.Include), patterns(FieldExclude, in.Exclude)
	src.MaxPages = in.MaxPages
	if src.MaxPages == 0 {
		src.MaxPages = plan.SourcePagesLimit()
	}
	if src.MaxPages < 1 || src.MaxPages > plan.SourcePagesLimit() {
		add(FieldMaxPages, -1, ProblemOutOfRange, 1, plan.SourcePagesLimit())
	}
	src.SyncInterval = DefaultSyncInterval
	if s := strings.TrimSpace(in.SyncInterval); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			add(FieldSyncInterval, -1, ProblemNotDuration, 0, 0)
			d = DefaultSyncInterval
		}
		src.SyncInterval = d
	}
	if floor := plan.MinSourceSync(); src.SyncInterval < floor || src.SyncInterval > MaxSyncInterval {
		add(FieldSyncInterval, -1, ProblemOutOfRange, int(floor/time.Second), int(MaxSyncInterval/time.Second))
	}
	if problems != nil {
		return store.KnowledgeSource{}, problems
	}
	return src, nil
}
