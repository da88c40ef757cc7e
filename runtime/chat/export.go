package chat

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// MaxExportsPerMerchant is how many exports (of leads and of knowledge, together) of one merchant a replica runs
// at once. A lead export holds little (a page of leads, see store.Reader.EachLead) but may last as long as its
// client is slow to read; a knowledge export holds the merchant's knowledge (bounded by the plan's
// knowledgeCharacters) while it is written: many at once are a way to tie a runtime's store and memory up.
const MaxExportsPerMerchant = 2

// ErrTooManyExports refuses an export while MaxExportsPerMerchant others of the merchant run.
var ErrTooManyExports = errors.New("the merchant's owners are running as many exports as they may at once")

// ExportLeads calls fn with each of the merchant's leads, newest first, read from the store a page at a time, so
// that what the runtime holds for an export is one page whatever the count of leads and however slowly fn's
// client reads. Past MaxExportsPerMerchant exports of the merchant at once, it returns ErrTooManyExports without
// calling fn; an error of fn ends the export and is returned.
func (s *Service) ExportLeads(ctx context.Context, m *tenant.Bundle, fn func(store.Lead) error) error {
	if !s.exports.acquire(m.MerchantID) {
		return ErrTooManyExports
	}
	defer s.exports.release(m.MerchantID)
	if err := s.store.EachLead(ctx, m.MerchantID, store.LeadFilter{}, fn); err != nil {
		return fmt.Errorf("exporting the leads of merchant %s: %w", m.MerchantID, err)
	}
	return nil
}

// ExportConversations calls fn with each of the merchant's conversations created in [from, to) (zero times are
// unbounded) and all its messages, newest conversation first, read from the store a page at a time
// (store.Reader.EachConversation), within the same bound as ExportLeads: ErrTooManyExports, without calling fn,
// past MaxExportsPerMerchant exports of the merchant at once. An error of fn ends the export and is returned.
func (s *Service) ExportConversations(ctx context.Context, m *tenant.Bundle, from, to time.Time,
	fn func(store.Conversation, []store.Message) error) error {
	if !s.exports.acquire(m.MerchantID) {
		return ErrTooManyExports
	}
	defer s.exports.release(m.MerchantID)
	if err := s.store.EachConversation(ctx, m.MerchantID, store.ConversationFilter{From: from, To: to}, fn); err != nil {
		return fmt.Errorf("exporting the conversations of merchant %s: %w", m.MerchantID, err)
	}
	return nil
}

// ExportKnowledge calls fn with every knowledge item of the merchant, within the same bound as ExportLeads:
// ErrTooManyExports, without calling fn, past MaxExportsPerMerchant exports of the merchant at once.
func (s *Service) ExportKnowledge(ctx context.Context, m *tenant.Bundle, fn func([]store.Knowledge) error) error {
	if !s.exports.acquire(m.MerchantID) {
		return ErrTooManyExports
	}
	defer s.exports.release(m.MerchantID)
	items, err := s.store.AllKnowledge(ctx, m.MerchantID)
	if err != nil {
		return fmt.Errorf("exporting the knowledge of merchant %s: %w", m.MerchantID, err)
	}
	return fn(items)
}

// running counts what runs at once per merchant, up to a bound.
type running struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// acquire counts one more for merchantID, or reports false when max already run.
func (r *running) acquire(merchantID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n[merchantID] >= r.max {
		return false
	}
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[merchantID]++
	return true
}

// release counts one less for merchantID; a merchant with none running is forgotten.
func (r *running) release(merchantID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n[merchantID]--; r.n[merchantID] <= 0 {
		delete(r.n, merchantID)
	}
}
