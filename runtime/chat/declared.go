package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// ErrSourceDeclared means the source stands for a KnowledgeSource object: only a change of that object changes
// it, so the API and the dashboard may read and sync it, never edit or delete it.
var ErrSourceDeclared = errors.New("the knowledge source is declared by a KnowledgeSource object")

// declaredRefusals are the declared sources a runtime could not apply, by merchant and source ID, with why: the
// report tells the operator, which shows it on the KnowledgeSource. Every replica decides alike from the same
// bundle, so whichever answers the operator says the same.
type declaredRefusals struct {
	mu sync.Mutex
	by map[string]map[string]string
}

func (d *declaredRefusals) set(merchantID string, refused map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.by == nil {
		d.by = map[string]map[string]string{}
	}
	if len(refused) == 0 {
		delete(d.by, merchantID)
		return
	}
	d.by[merchantID] = refused
}

func (d *declaredRefusals) of(merchantID string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.by[merchantID]
}

// declaredSourceRefusal says why a declared source is not stored, or is empty when it may be: a spec the
// merchant's plan refuses (SourceInput.Validate, as for the API), or no room left
// under the plan's sources (used counts the merchant's sources stored and not this one).
func declaredSourceRefusal(d tenant.Source, plan tenant.Plan, stored bool, used int) (store.KnowledgeSource, string) {
	in := SourceInput{Type: d.Type, URL: d.URL, Ref: d.Ref, Include: d.Include, Exclude: d.Exclude, MaxPages: int(d.MaxPages)}
	if d.SyncIntervalSeconds > 0 {
		in.SyncInterval = (time.Duration(d.SyncIntervalSeconds) * time.Second).String()
	}
	src, problems := in.Validate(plan)
	if problems != nil {
		words := make([]string, 0, len(problems))
		for _, p := range problems {
			words = append(words, declaredProblem(p))
		}
		return store.KnowledgeSource{}, "the merchant's plan or the runtime refuses the source: " + strings.Join(words, "; ")
	}
	if !stored && used >= plan.SourcesLimit() {
		return store.KnowledgeSource{}, fmt.Sprintf("the merchant's plan allows %d knowledge sources and all are used", plan.SourcesLimit())
	}
	return src, ""
}

// declaredProblem words a problem of a declared source with the KnowledgeSource's field names.
func declaredProblem(p FieldError) string {
	switch {
	case p.Problem == ProblemOutOfRange && p.Field == FieldSyncInterval:
		return fmt.Sprintf("syncInterval must be between %s (the plan's minSourceSyncInterval) and %s",
			time.Duration(p.Limit)*time.Second, time.Duration(p.Length)*time.Second)
	case p.Problem == ProblemOutOfRange && p.Field == FieldMaxPages:
		return fmt.Sprintf("maxPages must be at most %d (the plan's pagesPerSource)", p.Length)
	}
	return p.Error()
}

// ApplyDeclaredSources brings the merchant's declared sources in the store in line with its bundle: a new one is
// stored and due at once, one of a new generation replaced and due at once, one no longer declared deleted with
// its items. What it cannot store is kept, with why, for the report; a source of an earlier generation then stays
// as it was, with its items. Replicas may apply the same bundle at once: each write is idempotent.
func (s *Service) ApplyDeclaredSources(ctx context.Context, m *tenant.Bundle) error {
	stored, err := s.store.ListSources(ctx, m.MerchantID)
	if err != nil {
		return fmt.Errorf("listing the knowledge sources of %s: %w", m.MerchantID, err)
	}
	byID := make(map[string]store.KnowledgeSource, len(stored))
	for _, src := range stored {
		byID[src.ID] = src
	}
	used := len(stored)
	declared := make(map[string]bool, len(m.Sources))
	refused := map[string]string{}
	wrote := false
	now := s.now().UTC().Truncate(time.Millisecond)
	for _, d := range m.Sources {
		declared[d.ID] = true
		old, isStored := byID[d.ID]
		if isStored && old.Generation == d.Generation {
			continue
		}
		src, why := declaredSourceRefusal(d, m.Plan, isStored, used)
		if why != "" {
			refused[d.ID] = why
			continue
		}
		src.ID, src.MerchantID, src.Generation = d.ID, m.MerchantID, d.Generation
		src.NextSyncAt, src.CreatedAt, src.UpdatedAt = now, now, now
		var put bool
		if err := s.store.Write(ctx, func(tx store.Tx) error {
			put, err = tx.PutDeclaredSource(ctx, src)
			return err
		}); err != nil {
			return err
		}
		if !isStored {
			used++
		}
		wrote = wrote || put
	}
	for _, src := range stored {
		if src.Declared() && !declared[src.ID] {
			if err := deleteSource(ctx, s.store, m.MerchantID, src.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			s.indexes.reload(ctx, m.MerchantID)
		}
	}
	s.declared.set(m.MerchantID, refused)
	if wrote {
		s.wakeSyncs()
	}
	return nil
}

// declaredReports are what the operator shows of the merchant's declared sources: each stored one's last sync
// and the one running, and each refused one as failed with why, by source ID.
func (s *Service) declaredReports(ctx context.Context, m *tenant.Bundle) (map[string]contract.SourceReport, error) {
	if len(m.Sources) == 0 {
		return nil, nil
	}
	stored, err := s.store.ListSources(ctx, m.MerchantID)
	if err != nil {
		return nil, fmt.Errorf("listing the knowledge sources of %s: %w", m.MerchantID, err)
	}
	out := make(map[string]contract.SourceReport, len(m.Sources))
	for _, src := range stored {
		if !src.Declared() {
			continue
		}
		r := contract.SourceReport{Generation: src.Generation, SyncedGeneration: src.SyncedGeneration, Status: src.Status,
			LastOutcome: src.LastOutcome, PagesFound: src.PagesFound, Pages: src.Pages, Items: src.Items, Error: src.Error}
		if !src.LastSyncedAt.IsZero() {
			t := src.LastSyncedAt.UTC()
			r.LastSyncedAt = &t
		}
		if !src.NextSyncAt.IsZero() {
			t := src.NextSyncAt.UTC()
			r.NextSyncAt = &t
		}
		out[src.ID] = r
	}
	for _, d := range m.Sources {
		if why, ok := s.declared.of(m.MerchantID)[d.ID]; ok {
			// The spec of this generation is refused: the report says so, whatever an earlier one still holds.
			r := out[d.ID]
			r.Generation, r.SyncedGeneration, r.Status, r.LastOutcome, r.Error = d.Generation, d.Generation,
				store.SourceFailed, store.SourceFailed, why
			out[d.ID] = r
		}
	}
	return out, nil
}

// DeclaredApplier applies each served merchant's declared sources once its bundle changes (and once for every
// merchant after a start, which also deletes the sources of KnowledgeSources deleted meanwhile).
type DeclaredApplier struct {
	svc     *Service
	applied map[string]string // merchant ID → what was applied of its bundle
}

// NewDeclaredApplier builds an applier of the service's merchants' declared sources.
func NewDeclaredApplier(svc *Service) *DeclaredApplier {
	return &DeclaredApplier{svc: svc, applied: map[string]string{}}
}

// Apply applies the declared sources of each bundle whose sources or plan changed since it last did, and
// forgets merchants no longer served. A merchant that fails is tried again on the next call.
func (a *DeclaredApplier) Apply(ctx context.Context, bundles []*tenant.Bundle) error {
	served := make(map[string]bool, len(bundles))
	var errs []error
	for _, m := range bundles {
		served[m.MerchantID] = true
		fp := declaredFingerprint(m)
		if a.applied[m.MerchantID] == fp {
			continue
		}
		if err := a.svc.ApplyDeclaredSources(ctx, m); err != nil {
			errs = append(errs, err)
			continue
		}
		a.applied[m.MerchantID] = fp
	}
	for id := range a.applied {
		if !served[id] {
			delete(a.applied, id)
		}
	}
	return errors.Join(errs...)
}

// declaredFingerprint is what ApplyDeclaredSources reads of a bundle: its sources and the plan's bounds of them.
func declaredFingerprint(m *tenant.Bundle) string {
	return fmt.Sprintf("%d %d %d %+v", m.Plan.SourcesLimit(), m.Plan.SourcePagesLimit(), m.Plan.MinSourceSync(), m.Sources)
}
