// Package render holds the operator's object builders: pure functions from custom resources to the objects the
// operator writes. Nothing here talks to the API server, so every builder is table-tested on its own.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/tenant"
)

// SourceAnnotation on a tenant bundle names the Merchant (namespace/name) that owns the merchant ID, so that a
// second Merchant claiming the same ID is refused instead of taking the tenant over.
const SourceAnnotation = "chat.parley.dev/source"

// RetiredAnnotation on a tenant bundle records when its Merchant was deleted. A retired bundle is empty and
// labelled retired, so no runtime serves it; the runtime that served it erases the merchant's data once the
// ChatRuntime's deletedMerchantRetention has passed. The bundle stays after that too: it keeps the merchant ID
// from being claimed by another Merchant. A Merchant of the same namespace and name, created again, takes it
// back; its bundle carries its own UID, and the runtime erases its predecessor's data before serving it.
const RetiredAnnotation = contract.AnnotationRetiredAt

// WithdrawnKeysAnnotation on a tenant bundle lists, space-separated and newest first, the SHA-256 hashes of the
// keys the bundle published once and no longer does (deleted, expired, refused, or all of a deleted merchant's):
// a key's value stays its merchant's after revocation, so that another tenant cannot bring it back while pages
// and caches still carry it. The runtime never reads it.
const WithdrawnKeysAnnotation = "chat.parley.dev/withdrawn-key-hashes"

// maxWithdrawnKeys bounds WithdrawnKeysAnnotation: 13 KB of hashes, the oldest forgotten first.
const maxWithdrawnKeys = 200

// WithdrawnKeys is the WithdrawnKeysAnnotation of a bundle whose annotation was earlier and which published the
// keys of hashes before and now publishes those of now.
func WithdrawnKeys(earlier string, before, now []string) string {
	publishing := make(map[string]bool, len(now))
	for _, h := range now {
		publishing[h] = true
	}
	seen := make(map[string]bool)
	var out []string
	for _, h := range append(slices.Clone(before), strings.Fields(earlier)...) {
		if !publishing[h] && !seen[h] && len(out) < maxWithdrawnKeys {
			seen[h] = true
			out = append(out, h)
		}
	}
	return strings.Join(out, " ")
}

// FieldOwner is the server-side apply field manager of everything the operator renders.
const FieldOwner = "parley-operator"

// MerchantID returns the merchant's public identifier: spec.merchantID, or one derived from namespace and name.
// The derivation is stable, so deleting and re-creating a Merchant keeps its ID (not its data: the bundle carries
// the Merchant's UID too). A Merchant named like its namespace gets just that name.
func MerchantID(m *chatv1alpha1.Merchant) string {
	if m.Spec.MerchantID != "" {
		return m.Spec.MerchantID
	}
	id := m.Namespace + "-" + m.Name
	if m.Name == m.Namespace {
		id = m.Name
	}
	id = strings.ReplaceAll(id, ".", "-") // a Merchant's name may be a DNS subdomain
	if len(id) <= 63 {
		return id
	}
	sum := sha256.Sum256([]byte(m.Namespace + "/" + m.Name))
	return strings.TrimRight(id[:54], "-") + "-" + hex.EncodeToString(sum[:])[:8]
}

// Source returns the namespace/name that identifies a Merchant in its bundle.
func Source(m *chatv1alpha1.Merchant) string { return m.Namespace + "/" + m.Name }

// ResolvedKey is an API key that may go into a bundle.
type ResolvedKey struct {
	ID        string
	Type      chatv1alpha1.APIKeyType
	SHA256    string
	ExpiresAt *metav1.Time
}

// ResolvedWebhook is a webhook with its signing secrets read.
type ResolvedWebhook struct {
	Webhook        *chatv1alpha1.Webhook
	SigningSecrets []string
}

// Bundle builds a merchant's tenant bundle. Keys expired at now are left out; webhooks are included only when
// the plan has the webhooks feature and the webhook is enabled. Lists are sorted so that the document only
// changes when its content does.
func Bundle(m *chatv1alpha1.Merchant, merchantID string, plan *chatv1alpha1.Plan, keys []ResolvedKey,
	hooks []ResolvedWebhook, now time.Time) *tenant.Bundle {
	b := &tenant.Bundle{
		APIVersion:     tenant.APIVersion,
		MerchantID:     merchantID,
		UID:            string(m.UID),
		DisplayName:    m.Spec.DisplayName,
		Source:         Source(m),
		Plan:           bundlePlan(plan),
		Retention:      BundleRetention(plan.Spec.Retention, m.Spec.Retention),
		AllowedOrigins: sorted(m.Spec.AllowedOrigins),
		Widget: tenant.Widget{
			Title:    m.Spec.Widget.Title,
			Greeting: m.Spec.Widget.Greeting,
			Color:    m.Spec.Widget.Color,
			Position: string(m.Spec.Widget.Position),
			Locale:   m.Spec.Widget.Locale,
			// The widget follows the visitor's browser unless the merchant fixed its language.
			FixedLocale: m.Spec.Widget.FixedLocale,
		},
		Assistant: tenant.Assistant{
			Instructions:    m.Spec.Assistant.Instructions,
			FallbackMessage: m.Spec.Assistant.FallbackMessage,
			// The operator checked that the merchant's runtime declares them (controllers' assistantProblem).
			Provider: plan.Spec.Assistant.Provider,
			Model:    plan.Spec.Assistant.Model,
		},
		Suspended: m.Spec.Suspended, SelfServiceKeysDisabled: m.Spec.DisableSelfServiceKeys,
	}
	if b.Widget.Title == "" {
		b.Widget.Title = m.Spec.DisplayName
	}
	for _, o := range m.Spec.Owners {
		b.Owners = append(b.Owners, tenant.Owner{Email: o.Email, Subject: o.Subject})
	}
	for _, k := range keys {
		if Expired(k.ExpiresAt, now) {
			continue
		}
		key := tenant.APIKey{ID: k.ID, Type: tenant.KeyType(k.Type), SHA256: k.SHA256}
		if k.ExpiresAt != nil {
			t := k.ExpiresAt.UTC()
			key.ExpiresAt = &t
		}
		b.APIKeys = append(b.APIKeys, key)
	}
	sort.Slice(b.APIKeys, func(i, j int) bool { return b.APIKeys[i].ID < b.APIKeys[j].ID })
	if b.Plan.Webhooks {
		for _, h := range hooks {
			if h.Webhook.Spec.Disabled {
				continue
			}
			events := make([]tenant.Event, 0, len(h.Webhook.Spec.Events))
			for _, e := range h.Webhook.Spec.Events {
				events = append(events, tenant.Event(e))
			}
			sort.Slice(events, func(i, j int) bool { return events[i] < events[j] })
			b.Webhooks = append(b.Webhooks, tenant.Webhook{
				ID: h.Webhook.Name, URL: h.Webhook.Spec.URL, Events: events, SigningSecrets: h.SigningSecrets,
			})
		}
		sort.Slice(b.Webhooks, func(i, j int) bool { return b.Webhooks[i].ID < b.Webhooks[j].ID })
	}
	return b
}

// BundleRetention resolves a merchant's retention, kind by kind: the shorter of its Plan's and its own, where
// either sets one.
func BundleRetention(plan, merchant chatv1alpha1.Retention) tenant.Retention {
	shorter := func(p, m string) int32 {
		pd, md := retentionDays(p), retentionDays(m)
		if pd == 0 || (md > 0 && md < pd) {
			return md
		}
		return pd
	}
	return tenant.Retention{
		ConversationsDays:     shorter(plan.Conversations, merchant.Conversations),
		LeadsDays:             shorter(plan.Leads, merchant.Leads),
		WebhookDeliveriesDays: shorter(plan.WebhookDeliveries, merchant.WebhookDeliveries),
	}
}

// retentionDays reads a retention of the CRDs' pattern ("90d"); 0 for none, or for a value the pattern refuses.
func retentionDays(s string) int32 {
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "d"), 10, 32)
	if err != nil || !strings.HasSuffix(s, "d") || n <= 0 || n > tenant.MaxRetentionDays {
		return 0
	}
	return int32(n)
}

func bundlePlan(p *chatv1alpha1.Plan) tenant.Plan {
	return tenant.Plan{
		Name:                 p.Name,
		RequestsPerSecond:    p.Spec.RequestsPerSecond,
		Burst:                p.Spec.EffectiveBurst(),
		MonthlyConversations: p.Spec.MonthlyConversations,
		KnowledgeItems:       p.Spec.KnowledgeItems,
		KnowledgeCharacters:  p.Spec.KnowledgeCharacters,
		MonthlyTokens:        p.Spec.MonthlyTokens,
		APIAccess:            p.Spec.Features.APIAccess == nil || *p.Spec.Features.APIAccess,
		Webhooks:             p.Spec.Features.Webhooks,

		ConversationsPerAddressPerHour: p.Spec.ConversationsPerAddressPerHour,
		ConversationsPerVisitorPerHour: p.Spec.ConversationsPerVisitorPerHour,
		ImportItems:                    p.Spec.ImportItems,
		ImportBytes:                    p.Spec.ImportBytes,
		TurnsPerConversation:           p.Spec.TurnsPerConversation,
		TokensPerConversation:          p.Spec.TokensPerConversation,
		TurnsPerVisitorPerDay:          p.Spec.TurnsPerVisitorPerDay,
		TokensPerVisitorPerDay:         p.Spec.TokensPerVisitorPerDay,
		KnowledgeSources:               p.Spec.KnowledgeSources,
		PagesPerSource:                 p.Spec.PagesPerSource,
		MinSourceSyncSeconds:           sourceSyncSeconds(p.Spec.MinSourceSyncInterval),
	}
}

// sourceSyncSeconds is the plan's re-sync floor in whole seconds; 0 (the runtime's default) when unset.
func sourceSyncSeconds(d *metav1.Duration) int64 {
	if d == nil || d.Duration <= 0 {
		return 0
	}
	return max(1, int64(d.Duration/time.Second))
}

func sorted(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

// Expired reports whether an optional expiry time has passed at now.
func Expired(expiresAt *metav1.Time, now time.Time) bool {
	return expiresAt != nil && !now.Before(expiresAt.Time)
}

// NextExpiry returns how long until the earliest key expiry after now, or 0 when no key expires.
func NextExpiry(keys []ResolvedKey, now time.Time) time.Duration {
	var next time.Duration
	for _, k := range keys {
		if k.ExpiresAt == nil || Expired(k.ExpiresAt, now) {
			continue
		}
		if d := k.ExpiresAt.Sub(now); next == 0 || d < next {
			next = d
		}
	}
	return next
}

// BundleSecret builds the Secret that carries a merchant's bundle document in the runtime's target namespace.
func BundleSecret(runtime *chatv1alpha1.ChatRuntime, merchantID, source string, doc []byte) *corev1.Secret {
	labels := contract.BundleLabels(runtime.Name) // what the runtime selects its bundles by
	labels[chatv1alpha1.SecretLabel] = chatv1alpha1.SecretLabelTenant
	labels[chatv1alpha1.MerchantIDLabel] = merchantID
	labels["app.kubernetes.io/managed-by"] = FieldOwner
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        tenant.SecretName(merchantID),
			Namespace:   TargetNamespace(runtime),
			Labels:      labels,
			Annotations: map[string]string{SourceAnnotation: source},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{tenant.DataKey: doc},
	}
}

// EmbedSnippet is the script element a merchant pastes into its pages, with a placeholder for the key.
func EmbedSnippet(runtime *chatv1alpha1.ChatRuntime, merchantID string) string {
	base := runtime.Spec.WidgetURL
	if base == "" {
		base = runtime.Spec.PublicURL
	}
	if base == "" {
		base = "http://" + ServiceName(runtime) + "." + TargetNamespace(runtime) + ".svc"
	}
	return fmt.Sprintf(`<script src="%s/widget.js" data-api-key="<API_KEY>" data-merchant-id="%s" async></script>`,
		html.EscapeString(strings.TrimRight(base, "/")), html.EscapeString(merchantID))
}

// Sources are the merchant's KnowledgeSources as its bundle declares them, sorted by name so that the document
// only changes when a source does. Sources being deleted are left out: the runtime deletes them with their items.
func Sources(list []chatv1alpha1.KnowledgeSource) []tenant.Source {
	out := make([]tenant.Source, 0, len(list))
	for i := range list {
		ks := &list[i]
		if !ks.DeletionTimestamp.IsZero() {
			continue
		}
		typ := ks.Spec.Type
		if typ == "" {
			typ = chatv1alpha1.KnowledgeSourceWebsite
		}
		src := tenant.Source{ID: ks.Name, Generation: max(ks.Generation, 1), Type: string(typ), URL: ks.Spec.URL,
			Ref: ks.Spec.Ref, Include: slices.Clone(ks.Spec.Include), Exclude: slices.Clone(ks.Spec.Exclude),
			MaxPages: ks.Spec.MaxPages}
		if d := ks.Spec.SyncInterval; d != nil && d.Duration > 0 {
			src.SyncIntervalSeconds = max(1, int64(d.Duration/time.Second))
		}
		out = append(out, src)
	}
	slices.SortFunc(out, func(a, b tenant.Source) int { return strings.Compare(a.ID, b.ID) })
	if len(out) == 0 {
		return nil
	}
	return out
}
