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
	// Sources are the merchant's declared knowledge sources (its KnowledgeSources), by ID: the object's name.
	Sources map[string]SourceReport `json:"sources,omitempty"`
}

// SourceReport is what the runtime knows of a declared knowledge source's syncs.
type SourceReport struct {
	// Generation is the KnowledgeSource generation the runtime holds; SyncedGeneration the one its last finished
	// sync read (0 before the first).
	Generation       int64 `json:"generation"`
	SyncedGeneration int64 `json:"synced_generation"`
	// Status is pending, syncing, ready or failed, as the REST API shows it; LastOutcome is how the last finished
	// sync ended (ready or failed), kept while the next one runs.
	Status      string `json:"status"`
	LastOutcome string `json:"last_outcome,omitempty"`
	// PagesFound and Pages are the running or last sync's counts; Items the source's items.
	PagesFound int `json:"pages_found"`
	Pages      int `json:"pages"`
	Items      int `json:"items"`
	// LastSyncedAt is when the last sync ended; NextSyncAt when the next is due.
	LastSyncedAt *time.Time `json:"last_synced_at,omitempty"`
	NextSyncAt   *time.Time `json:"next_sync_at,omitempty"`
	// Error says why the last sync failed, or what it left out, or why the runtime refuses the source.
	Error string `json:"error,omitempty"`
}
