package contract

import "time"

// UsagePath is where `parley runtime` serves its merchants' usage on its metrics listener (--metrics-listen),
// never on the public port, for the operator to copy into each Merchant's status.
const UsagePath = "/usage"

// UsageReport is the runtime's answer at UsagePath.
type UsageReport struct {
	// MonthStart is the first instant of the UTC month the conversations are counted in.
	MonthStart time.Time `json:"month_start"`
	// ObservedAt is when the runtime counted.
	ObservedAt time.Time `json:"observed_at"`
	// Merchants are the usage of every merchant the runtime serves, by merchant ID.
	Merchants map[string]MerchantUsage `json:"merchants"`
}

// MerchantUsage is one merchant's use of its plan's monthly conversation ceiling, and the keys of its bundle the
// runtime refuses.
type MerchantUsage struct {
	// Conversations is how many conversations started this UTC month.
	Conversations int `json:"conversations"`
	// ConversationLimit is the plan's monthly ceiling; 0 means none.
	ConversationLimit int `json:"conversation_limit"`
	// KeysInUse are the IDs of the merchant's bundle keys the runtime refuses because another merchant's
	// self-service key (created in the dashboard) holds their hash; the operator reports them on their APIKeys.
	KeysInUse []string `json:"keys_in_use,omitempty"`
}
