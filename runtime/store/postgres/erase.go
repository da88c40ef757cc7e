package postgres

import (
	"context"
	"fmt"
)

// merchantTables are the tables holding a merchant's rows, children before their parents (deliveries refer to
// events, messages to conversations).
var merchantTables = []string{
	"delivery_attempts", "deliveries", "events", "disabled_endpoints",
	"messages", "conversations", "monthly_conversations", "monthly_tokens",
	"knowledge_uses", "knowledge", "knowledge_state", "leads", "api_keys",
}

// EraseMerchant deletes the merchant's rows from every table, in the caller's transaction.
func (tx writeTx) EraseMerchant(ctx context.Context, merchantID string) (int64, error) {
	tx.flushCounts() // the counts of exchanges written before in the transaction are erased too
	var total int64
	for _, table := range merchantTables {
		tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE merchant_id = $1`, merchantID)
		if err != nil {
			return 0, fmt.Errorf("erasing %s: %w", table, err)
		}
		total += tag.RowsAffected()
	}
	return total, nil
}
