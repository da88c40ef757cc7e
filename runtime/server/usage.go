package server

import (
	"net/http"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
)

type usageJSON struct {
	MonthStart     time.Time   `json:"month_start"`
	MonthEnd       time.Time   `json:"month_end"`
	Conversations  counterJSON `json:"conversations"`
	KnowledgeItems counterJSON `json:"knowledge_items"`
}

// counterJSON is a count against its ceiling; a nil limit is none.
type counterJSON struct {
	Used  int  `json:"used"`
	Limit *int `json:"limit"`
}

func counter(used, limit int) counterJSON {
	c := counterJSON{Used: used}
	if limit > 0 {
		c.Limit = &limit
	}
	return c
}

// usage answers the merchant's use of its plan: conversations this month and knowledge items, each against its
// ceiling.
func (s *Server) usage(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	u, err := s.chat.Usage(r.Context(), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toUsageJSON(u))
	return nil
}

func toUsageJSON(u chat.Usage) usageJSON {
	return usageJSON{MonthStart: u.MonthStart, MonthEnd: u.MonthEnd, Conversations: counter(u.Conversations, u.ConversationLimit),
		KnowledgeItems: counter(u.KnowledgeItems, u.KnowledgeLimit)}
}
