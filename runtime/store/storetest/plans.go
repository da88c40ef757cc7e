package storetest

import (
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// Query is a query's text and its arguments.
type Query struct {
	SQL  string
	Args []any
}

// ListingQueries are, for each store's query plan test, the queries of a page of each listing newest first in
// dialect d, after a cursor when after is set, by the index each should read in its order.
func ListingQueries(d storeutil.Dialect, merchantID string, after bool) map[string]Query {
	var c *storeutil.Cursor
	if after {
		c = &storeutil.Cursor{CreatedAt: 1_700_000_000_000, ID: "x"}
	}
	q := func(sql string, args []any) Query { return Query{SQL: sql, Args: args} }
	return map[string]Query{
		"conversations_by_created": q(storeutil.ConversationsQuery(d, merchantID, c, store.ConversationFilter{}, 21)),
		"conversations_by_status": q(storeutil.ConversationsQuery(d, merchantID, c,
			store.ConversationFilter{Status: store.StatusWaiting}, 21)),
		"knowledge_by_created":  q(storeutil.KnowledgeQuery(d, merchantID, c, store.KnowledgeFilter{}, 21)),
		"leads_by_created":      q(storeutil.LeadsQuery(d, merchantID, c, store.LeadFilter{}, 21)),
		"deliveries_by_created": q(storeutil.DeliveriesQuery(d, merchantID, c, store.DeliveryFilter{}, 21)),
	}
}
