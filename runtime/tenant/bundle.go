// Package tenant defines the tenant bundle: the versioned document the operator writes for each merchant and the
// runtime loads. It is the whole contract between the two; the runtime never imports the operator.
//
// A bundle holds API keys only as SHA-256 hashes. It does hold webhook signing secrets, because the runtime signs
// with them, so a bundle always travels in a Secret.
package tenant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/internal/contract"
)

// APIVersion is the version of the bundle document this package reads and writes.
const APIVersion = "tenant.chat.parley.dev/v1"

// DataKey is the key of the bundle document in its Secret.
const DataKey = "tenant.json"

// SecretName returns the name of the Secret that carries a merchant's bundle.
func SecretName(merchantID string) string { return "parley-tenant-" + merchantID }

// KeyType says who may use an API key.
type KeyType string

const (
	// KeyPublishable keys are used from browsers and only accepted from the merchant's allowed origins.
	KeyPublishable KeyType = "publishable"
	// KeySecret keys are used by servers.
	KeySecret KeyType = "secret"
)

// Event names an event a webhook subscribes to.
type Event string

// The events a webhook can subscribe to.
const (
	EventConversationCreated Event = contract.EventConversationCreated
	EventLeadCreated         Event = contract.EventLeadCreated
	EventLeadUpdated         Event = contract.EventLeadUpdated
	// EventConversationHandoffRequested, EventConversationAgentMessage and EventConversationClosed follow a
	// conversation handed to the merchant's team.
	EventConversationHandoffRequested Event = contract.EventConversationHandoffRequested
	EventConversationAgentMessage     Event = contract.EventConversationAgentMessage
	EventConversationClosed           Event = contract.EventConversationClosed
	// EventFeedbackCreated follows a visitor's rating of an answer or a conversation.
	EventFeedbackCreated Event = contract.EventFeedbackCreated
	// EventPrivacyErased follows the erasure of a data subject's records.
	EventPrivacyErased Event = contract.EventPrivacyErased
)

var knownEvents = []Event{EventConversationCreated, EventLeadCreated, EventLeadUpdated, EventConversationHandoffRequested,
	EventConversationAgentMessage, EventConversationClosed, EventFeedbackCreated, EventPrivacyErased}

// Bundle is everything the runtime needs to serve one merchant.
type Bundle struct {
	// APIVersion is always APIVersion; a runtime rejects a document of a version it does not know.
	APIVersion string `json:"apiVersion"`
	// MerchantID is the merchant's public identifier, a DNS label.
	MerchantID string `json:"merchantID"`
	// UID is the UID of the Merchant object the bundle was rendered from: one deleted and created again under the
	// same name keeps the merchant ID but not the UID, and the runtime erases its predecessor's data before
	// serving it. Empty in a bundle from a file, which has no object behind it.
	UID string `json:"uid,omitempty"`
	// DisplayName is the merchant's name.
	DisplayName string `json:"displayName"`
	// Source names the Merchant object the bundle was rendered from, as namespace/name, for diagnostics.
	Source string `json:"source,omitempty"`
	// Plan holds the resolved limits and features.
	Plan Plan `json:"plan"`
	// AllowedOrigins are the origins publishable keys are accepted from; empty means none.
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	// Owners may use the dashboard endpoints.
	Owners []Owner `json:"owners,omitempty"`
	// Widget is the widget's look.
	Widget Widget `json:"widget"`
	// Assistant is the merchant's part of the assistant's behaviour.
	Assistant Assistant `json:"assistant"`
	// APIKeys are the usable keys, as hashes.
	APIKeys []APIKey `json:"apiKeys,omitempty"`
	// Webhooks are the endpoints events are delivered to; empty unless the plan has webhooks.
	Webhooks []Webhook `json:"webhooks,omitempty"`
	// Suspended refuses chat while keeping everything else.
	Suspended bool `json:"suspended,omitempty"`
	// SelfServiceKeysDisabled refuses the keys owners create in the dashboard, and their creation.
	SelfServiceKeysDisabled bool `json:"selfServiceKeysDisabled,omitempty"`
	// Retention is how long the merchant's personal data is kept; none is kept for ever.
	Retention Retention `json:"retention,omitzero"`
	// Sources are the knowledge sources declared as KnowledgeSource objects, which the runtime creates, keeps in
	// step and syncs; the REST API and the dashboard cannot edit or delete them.
	Sources []Source `json:"sources,omitempty"`
}

// The types of a declared knowledge source.
const (
	SourceWebsite = "website"
	SourceGit     = "git"
)

// MaxSources bounds the declared sources of a bundle, whatever the plan: each may take a few KiB of patterns.
const MaxSources = 50

// Source is a knowledge source declared by a KnowledgeSource object. Its fields are the REST API's; the runtime
// validates them against the plan as it does the API's, and reports what it refuses as a failed sync.
type Source struct {
	// ID is the KnowledgeSource's name, which is also the source's ID in the runtime's store and API: a DNS
	// subdomain, never like the IDs the API makes ("src_…").
	ID string `json:"id"`
	// Generation is the KnowledgeSource's metadata.generation, reported back with each sync so that the operator
	// knows which spec a sync read.
	Generation int64 `json:"generation"`
	// Type is website or git.
	Type string `json:"type"`
	// URL is the website's start address or sitemap, or the repository's.
	URL string `json:"url"`
	// Ref is a Git source's branch or tag.
	Ref string `json:"ref,omitempty"`
	// Include and Exclude are path patterns.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// MaxPages bounds the pages of a sync; 0 is the plan's.
	MaxPages int32 `json:"maxPages,omitempty"`
	// SyncIntervalSeconds is the time between syncs; 0 is the runtime's default.
	SyncIntervalSeconds int64 `json:"syncIntervalSeconds,omitempty"`
}

// MaxRetentionDays bounds a retention: a hundred years.
const MaxRetentionDays = 36500

// Retention is how long, in days, the runtime keeps each kind of a merchant's personal data, as the operator
// resolved it (the Merchant's own where shorter than its Plan's); 0 keeps it for ever.
type Retention struct {
	// ConversationsDays counts from a conversation's last message; its messages go with it.
	ConversationsDays int32 `json:"conversationsDays,omitempty"`
	// LeadsDays counts from a lead's last change.
	LeadsDays int32 `json:"leadsDays,omitempty"`
	// WebhookDeliveriesDays counts from an event's creation; its deliveries, payloads and attempts go with it.
	WebhookDeliveriesDays int32 `json:"webhookDeliveriesDays,omitempty"`
}

// Plan is a plan's limits and features as resolved for a merchant.
type Plan struct {
	// Name of the Plan object.
	Name string `json:"name"`
	// RequestsPerSecond is the sustained request rate per merchant.
	RequestsPerSecond int32 `json:"requestsPerSecond"`
	// Burst is the token bucket size.
	Burst int32 `json:"burst"`
	// MonthlyConversations is the monthly ceiling of new conversations; 0 means none.
	MonthlyConversations int32 `json:"monthlyConversations"`
	// KnowledgeItems is the ceiling of knowledge items; 0 means none.
	KnowledgeItems int32 `json:"knowledgeItems"`
	// KnowledgeCharacters is the ceiling of the characters of all knowledge items (titles, contents and listed
	// questions), which bounds the memory of the merchant's retrieval index; 0 means none.
	KnowledgeCharacters int32 `json:"knowledgeCharacters,omitempty"`
	// MonthlyTokens is the monthly ceiling of model tokens, past which the offline assistant answers; 0 means none.
	MonthlyTokens int64 `json:"monthlyTokens,omitempty"`
	// APIAccess allows secret keys on the REST API.
	APIAccess bool `json:"apiAccess"`
	// Webhooks allows webhook deliveries.
	Webhooks bool `json:"webhooks"`
	// ConversationsPerAddressPerHour is how many new conversations one client address may start in an hour
	// with a publishable key; 0 means DefaultConversationsPerAddressPerHour.
	ConversationsPerAddressPerHour int32 `json:"conversationsPerAddressPerHour,omitempty"`
	// ConversationsPerVisitorPerHour is how many new conversations one visitor ID may start in an hour with a
	// publishable key; 0 means DefaultConversationsPerVisitorPerHour.
	ConversationsPerVisitorPerHour int32 `json:"conversationsPerVisitorPerHour,omitempty"`
	// ImportItems is how many items one knowledge import may hold; 0 means DefaultImportItems.
	ImportItems int32 `json:"importItems,omitempty"`
	// ImportBytes is how many bytes one knowledge import file may hold; 0 means DefaultImportBytes.
	ImportBytes int32 `json:"importBytes,omitempty"`
	// TurnsPerConversation is how many messages one conversation answers; 0 means DefaultTurnsPerConversation.
	TurnsPerConversation int32 `json:"turnsPerConversation,omitempty"`
	// TokensPerConversation is the model tokens one conversation's answers may take; 0 means
	// DefaultTokensPerConversation.
	TokensPerConversation int64 `json:"tokensPerConversation,omitempty"`
	// TurnsPerVisitorPerDay is how many messages of one visitor ID's conversations started in the last 24 hours
	// are answered; 0 means DefaultTurnsPerVisitorPerDay.
	TurnsPerVisitorPerDay int32 `json:"turnsPerVisitorPerDay,omitempty"`
	// TokensPerVisitorPerDay is the model tokens the answers of one visitor ID's conversations started in the
	// last 24 hours may take; 0 means DefaultTokensPerVisitorPerDay.
	TokensPerVisitorPerDay int64 `json:"tokensPerVisitorPerDay,omitempty"`
	// KnowledgeSources is how many knowledge sources (websites, Git repositories) the merchant may keep; 0 means
	// DefaultKnowledgeSources.
	KnowledgeSources int32 `json:"knowledgeSources,omitempty"`
	// PagesPerSource is the most pages one sync of a source reads; 0 means DefaultPagesPerSource.
	PagesPerSource int32 `json:"pagesPerSource,omitempty"`
	// MinSourceSyncSeconds is the shortest time between the scheduled syncs of a source; 0 means
	// DefaultMinSourceSync.
	MinSourceSyncSeconds int64 `json:"minSourceSyncSeconds,omitempty"`
}

// The bounds of knowledge sources of a plan that sets none: a small shop's site and help centre, read at most
// hourly, so that a runtime's crawls stay a small load on the merchants' sites and on itself.
const (
	DefaultKnowledgeSources = 5
	DefaultPagesPerSource   = 500
	DefaultMinSourceSync    = time.Hour
)

// SourcesLimit is the plan's knowledge sources, its default when unset.
func (p Plan) SourcesLimit() int { return int(orDefault(p.KnowledgeSources, DefaultKnowledgeSources)) }

// SourcePagesLimit is the plan's pages per sync of a source, its default when unset.
func (p Plan) SourcePagesLimit() int { return int(orDefault(p.PagesPerSource, DefaultPagesPerSource)) }

// MinSourceSync is the plan's shortest time between scheduled syncs of a source, its default when unset.
func (p Plan) MinSourceSync() time.Duration {
	return time.Duration(orDefault(p.MinSourceSyncSeconds, int64(DefaultMinSourceSync/time.Second))) * time.Second
}

// The model's bounds per conversation and per visitor of a plan that sets none (a bundle of an older operator):
// a help desk conversation rarely passes a dozen turns, and an answer with its context takes a few thousand
// tokens, so a visitor holding the page's public key cannot spend more than a few answers' worth of a month.
const (
	DefaultTurnsPerConversation   = 50
	DefaultTokensPerConversation  = 100_000
	DefaultTurnsPerVisitorPerDay  = 200
	DefaultTokensPerVisitorPerDay = 400_000
)

// ConversationTurns is the plan's answers per conversation, its default when unset.
func (p Plan) ConversationTurns() int {
	return int(orDefault(p.TurnsPerConversation, DefaultTurnsPerConversation))
}

// ConversationTokens is the plan's model tokens per conversation, its default when unset.
func (p Plan) ConversationTokens() int64 {
	return orDefault(p.TokensPerConversation, DefaultTokensPerConversation)
}

// VisitorTurns is the plan's answers per visitor and day, its default when unset.
func (p Plan) VisitorTurns() int {
	return int(orDefault(p.TurnsPerVisitorPerDay, DefaultTurnsPerVisitorPerDay))
}

// VisitorTokens is the plan's model tokens per visitor and day, its default when unset.
func (p Plan) VisitorTokens() int64 {
	return orDefault(p.TokensPerVisitorPerDay, DefaultTokensPerVisitorPerDay)
}

func orDefault[T int32 | int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// The abuse limits of a plan that sets none: enough for a household or an office behind one address chatting
// all day, far too few to drain a month's conversations.
const (
	DefaultConversationsPerAddressPerHour = 20
	DefaultConversationsPerVisitorPerHour = 10
)

// The bounds of one knowledge import of a plan that sets none, and the most any plan may set: what a runtime
// validates, and holds, for one upload is bounded whatever the file.
const (
	DefaultImportItems = 1000
	MaxImportItems     = 10000
	DefaultImportBytes = 4 << 20
	// MaxImportBytes is also what the dashboard reads of an upload, so that every plan's value works there.
	MaxImportBytes = 4 << 20
)

// ImportItemsLimit is the plan's items per knowledge import: its default when unset, never past MaxImportItems.
func (p Plan) ImportItemsLimit() int {
	if p.ImportItems > 0 {
		return min(int(p.ImportItems), MaxImportItems)
	}
	return DefaultImportItems
}

// ImportBytesLimit is the plan's bytes per knowledge import file: its default when unset, never past
// MaxImportBytes.
func (p Plan) ImportBytesLimit() int {
	if p.ImportBytes > 0 {
		return min(int(p.ImportBytes), MaxImportBytes)
	}
	return DefaultImportBytes
}

// AddressLimit is the plan's new conversations per client address and hour, its default when unset.
func (p Plan) AddressLimit() int {
	if p.ConversationsPerAddressPerHour > 0 {
		return int(p.ConversationsPerAddressPerHour)
	}
	return DefaultConversationsPerAddressPerHour
}

// VisitorLimit is the plan's new conversations per visitor ID and hour, its default when unset.
func (p Plan) VisitorLimit() int {
	if p.ConversationsPerVisitorPerHour > 0 {
		return int(p.ConversationsPerVisitorPerHour)
	}
	return DefaultConversationsPerVisitorPerHour
}

// Owner is an identity-provider principal allowed on the dashboard endpoints; exactly one field is set.
type Owner struct {
	// Email matches a verified `email` claim.
	Email string `json:"email,omitempty"`
	// Subject matches the `sub` claim.
	Subject string `json:"subject,omitempty"`
}

// Widget is the embedded widget's look.
type Widget struct {
	Title    string `json:"title,omitempty"`
	Greeting string `json:"greeting,omitempty"`
	Color    string `json:"color,omitempty"`
	Position string `json:"position,omitempty"`
	Locale   string `json:"locale,omitempty"`
	// FixedLocale shows the widget's texts in Locale whatever the visitor's browser asks for.
	FixedLocale bool `json:"fixedLocale,omitempty"`
}

// Assistant is the merchant's part of the assistant's behaviour.
type Assistant struct {
	Instructions    string `json:"instructions,omitempty"`
	FallbackMessage string `json:"fallbackMessage,omitempty"`
	// Provider names the runtime's model provider (--providers) that answers the merchant, as its plan chose;
	// empty for the runtime's default (--assistant).
	Provider string `json:"provider,omitempty"`
	// Model is the provider's model that answers; empty for the provider's first.
	Model string `json:"model,omitempty"`
	// APIKey is the merchant's own key for the provider, sent instead of the provider's; empty for the
	// provider's. Like the webhooks' signing secrets, it is why a bundle travels in a Secret.
	APIKey string `json:"apiKey,omitempty"`
}

// APIKey is a usable key, known only by its hash.
type APIKey struct {
	// ID identifies the key in logs without revealing it.
	ID string `json:"id"`
	// Type is publishable or secret.
	Type KeyType `json:"type"`
	// SHA256 is the lowercase hex SHA-256 of the whole key.
	SHA256 string `json:"sha256"`
	// ExpiresAt is when the key stops working, if ever.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// Webhook is an endpoint events are delivered to.
type Webhook struct {
	// ID identifies the endpoint; it is the Webhook object's name.
	ID string `json:"id"`
	// URL receives the events.
	URL string `json:"url"`
	// Events are the subscribed events.
	Events []Event `json:"events"`
	// SigningSecrets sign each delivery ("whsec_..."); the first is current, a second one is being rotated out
	// and also signs until it is removed.
	SigningSecrets []string `json:"signingSecrets"`
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// dnsSubdomain is a Kubernetes object's name.
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	sha256Hex    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// uidPattern admits what the API server issues (a UUID) and what a test or another tool may: no spaces or
	// controls, since it is logged.
	uidPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]*$`)
	origin     = regexp.MustCompile(`^https?://(\[[0-9a-f:.]+\]|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)(:[0-9]{1,5})?$`)
)

// Parse decodes and validates a bundle document. Unknown fields and unknown versions are rejected, so that a
// runtime never half-understands a bundle.
func Parse(data []byte) (*Bundle, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decoding tenant bundle: %w", err)
	}
	if head.APIVersion != APIVersion {
		return nil, fmt.Errorf("tenant bundle apiVersion %q is not supported (want %q)", head.APIVersion, APIVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("decoding tenant bundle: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decoding tenant bundle: trailing data after the document")
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &b, nil
}

// Marshal validates a bundle and encodes it as its document.
func Marshal(b *Bundle) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(b)
}

// Validate reports every problem of a bundle at once.
func (b *Bundle) Validate() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if b.APIVersion != APIVersion {
		fail("apiVersion %q is not supported (want %q)", b.APIVersion, APIVersion)
	}
	if len(b.MerchantID) > 63 || !dnsLabel.MatchString(b.MerchantID) {
		fail("merchantID %q is not a DNS label", b.MerchantID)
	}
	if len(b.UID) > 128 || !uidPattern.MatchString(b.UID) {
		fail("uid %q is not an object UID", b.UID)
	}
	if b.Plan.RequestsPerSecond < 1 {
		fail("plan.requestsPerSecond must be positive")
	}
	if b.Plan.Burst < 1 {
		fail("plan.burst must be positive")
	}
	if b.Plan.MonthlyConversations < 0 || b.Plan.KnowledgeItems < 0 || b.Plan.KnowledgeCharacters < 0 || b.Plan.MonthlyTokens < 0 {
		fail("plan ceilings must not be negative")
	}
	if b.Plan.ConversationsPerAddressPerHour < 0 || b.Plan.ConversationsPerVisitorPerHour < 0 ||
		b.Plan.TurnsPerConversation < 0 || b.Plan.TokensPerConversation < 0 || b.Plan.TurnsPerVisitorPerDay < 0 ||
		b.Plan.TokensPerVisitorPerDay < 0 {
		fail("plan abuse limits must not be negative")
	}
	if b.Plan.ImportItems < 0 || b.Plan.ImportBytes < 0 {
		fail("plan import bounds must not be negative")
	}
	for _, d := range []int32{b.Retention.ConversationsDays, b.Retention.LeadsDays, b.Retention.WebhookDeliveriesDays} {
		if d < 0 || d > MaxRetentionDays {
			fail("retention days must be 0 to %d", MaxRetentionDays)
		}
	}
	if a := b.Assistant; a.Provider != "" && !dnsLabel.MatchString(a.Provider) || a.Model != "" && a.Provider == "" {
		fail("assistant.provider %q is not a DNS label, or a model is named without it", a.Provider)
	}
	for _, o := range b.AllowedOrigins {
		if !origin.MatchString(o) {
			fail("allowed origin %q is not scheme://host[:port]", o)
		}
	}
	for i, o := range b.Owners {
		if (o.Email == "") == (o.Subject == "") {
			fail("owners[%d] must have exactly one of email or subject", i)
		}
	}
	keyIDs := map[string]bool{}
	for i, k := range b.APIKeys {
		if k.ID == "" {
			fail("apiKeys[%d].id is empty", i)
		} else if keyIDs[k.ID] {
			fail("apiKeys[%d].id %q is duplicated", i, k.ID)
		}
		keyIDs[k.ID] = true
		if k.Type != KeyPublishable && k.Type != KeySecret {
			fail("apiKeys[%d].type %q is neither publishable nor secret", i, k.Type)
		}
		if !sha256Hex.MatchString(k.SHA256) {
			fail("apiKeys[%d].sha256 is not 64 lowercase hex digits", i)
		}
	}
	if len(b.Sources) > MaxSources {
		fail("sources: %d, more than the %d a bundle may hold", len(b.Sources), MaxSources)
	}
	sourceIDs := map[string]bool{}
	for i, s := range b.Sources {
		if len(s.ID) > 253 || !dnsSubdomain.MatchString(s.ID) {
			fail("sources[%d].id %q is not a DNS subdomain", i, s.ID)
		} else if sourceIDs[s.ID] {
			fail("sources[%d].id %q is duplicated", i, s.ID)
		}
		sourceIDs[s.ID] = true
		if s.Type != SourceWebsite && s.Type != SourceGit {
			fail("sources[%d].type %q is neither website nor git", i, s.Type)
		}
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			fail("sources[%d].url is not an absolute http(s) URL", i)
		}
		if s.Generation < 1 || s.MaxPages < 0 || s.SyncIntervalSeconds < 0 {
			fail("sources[%d]: generation must be positive, maxPages and syncIntervalSeconds not negative", i)
		}
	}
	hookIDs := map[string]bool{}
	for i, w := range b.Webhooks {
		if w.ID == "" {
			fail("webhooks[%d].id is empty", i)
		} else if hookIDs[w.ID] {
			fail("webhooks[%d].id %q is duplicated", i, w.ID)
		}
		hookIDs[w.ID] = true
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			fail("webhooks[%d].url is not an absolute http(s) URL", i)
		}
		if len(w.Events) == 0 {
			fail("webhooks[%d] subscribes to no event", i)
		}
		for _, e := range w.Events {
			if !slices.Contains(knownEvents, e) {
				fail("webhooks[%d] subscribes to unknown event %q", i, e)
			}
		}
		if len(w.SigningSecrets) == 0 || len(w.SigningSecrets) > 2 {
			fail("webhooks[%d] must have one or two signing secrets", i)
		}
		for _, s := range w.SigningSecrets {
			// The secret itself never goes into an error.
			if !strings.HasPrefix(s, "whsec_") || len(s) < len("whsec_")+32 {
				fail("webhooks[%d] has a signing secret that is not whsec_ and base64 of at least 24 bytes", i)
			}
		}
	}
	return errors.Join(errs...)
}
