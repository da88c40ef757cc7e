package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Usage is a merchant's use of its plan's ceilings; a limit of 0 means none.
type Usage struct {
	// MonthStart and MonthEnd bound the current UTC month, which the conversation ceiling counts.
	MonthStart, MonthEnd time.Time
	Conversations        int
	ConversationLimit    int
	KnowledgeItems       int
	KnowledgeLimit       int
}

// UsageReport counts each merchant's conversations this month against its plan's ceiling, names the keys of its
// bundle that another merchant holds (refusedBundleKeys), and reports its declared sources' syncs, for the
// operator.
func (s *Service) UsageReport(ctx context.Context, merchants []*tenant.Bundle) (contract.UsageReport, error) {
	refused, err := s.refusedBundleKeys(ctx, merchants)
	if err != nil {
		return contract.UsageReport{}, err
	}
	now := s.now().UTC()
	out := contract.UsageReport{MonthStart: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), ObservedAt: now,
		Merchants: make(map[string]contract.MerchantUsage, len(merchants))}
	for _, m := range merchants {
		n, err := s.store.ConversationsThisMonth(ctx, m.MerchantID, now)
		if err != nil {
			return contract.UsageReport{}, fmt.Errorf("counting %s's conversations: %w", m.MerchantID, err)
		}
		sources, err := s.declaredReports(ctx, m)
		if err != nil {
			return contract.UsageReport{}, err
		}
		out.Merchants[m.MerchantID] = contract.MerchantUsage{Conversations: n, ConversationLimit: int(m.Plan.MonthlyConversations),
			KeysInUse: refused[m.MerchantID], Sources: sources}
	}
	return out, nil
}

// Usage reads the merchant's conversations this month and its knowledge items against its plan.
func (s *Service) Usage(ctx context.Context, m *tenant.Bundle) (Usage, error) {
	now := s.now().UTC()
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	conv, err := s.store.ConversationsThisMonth(ctx, m.MerchantID, now)
	if err != nil {
		return Usage{}, err
	}
	items, err := s.store.AllKnowledge(ctx, m.MerchantID)
	if err != nil {
		return Usage{}, err
	}
	return Usage{MonthStart: start, MonthEnd: start.AddDate(0, 1, 0), Conversations: conv, ConversationLimit: int(m.Plan.MonthlyConversations),
		KnowledgeItems: len(items), KnowledgeLimit: int(m.Plan.KnowledgeItems)}, nil
}
