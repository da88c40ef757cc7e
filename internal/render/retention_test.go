package render

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/runtime/tenant"
)

// schemaAt returns the CRD's schema at a path of properties.
func schemaAt(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, path ...string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := *crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, p := range path {
		next, ok := s.Properties[p]
		if !ok {
			t.Fatalf("%s has no property %s", crd.Name, strings.Join(path, "."))
		}
		s = next
	}
	return s
}

// Every retention the Plan's and the Merchant's CRDs accept reaches the bundle as the days it says, and the
// runtime accepts the bundle; what the CRDs refuse never reaches it.
func TestEveryAcceptedRetentionWorksEndToEnd(t *testing.T) {
	for _, file := range []string{"chat.parley.dev_plans.yaml", "chat.parley.dev_merchants.yaml"} {
		crd := readCRD(t, file)
		for _, field := range []string{"conversations", "leads", "webhookDeliveries"} {
			pattern := regexp.MustCompile(schemaAt(t, crd, "spec", "retention", field).Pattern)
			accepted := 0
			for _, v := range []string{"0d", "1", "d", "-1d", "1.5d", "10000d", "90h", "01d", "1d ", "9999d"} {
				if pattern.MatchString(v) && retentionDays(v) == 0 {
					t.Errorf("%s %s accepts %q, which the bundle drops", file, field, v)
				}
			}
			for n := range 10001 {
				v := fmt.Sprintf("%dd", n)
				if !pattern.MatchString(v) {
					continue
				}
				accepted++
				b := &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: "acme", DisplayName: "Acme",
					Plan:      tenant.Plan{Name: "p", RequestsPerSecond: 1, Burst: 1},
					Retention: BundleRetention(chatv1alpha1.Retention{Conversations: v, Leads: v, WebhookDeliveries: v}, chatv1alpha1.Retention{})}
				if b.Retention.ConversationsDays != int32(n) {
					t.Fatalf("%q reaches the bundle as %d days", v, b.Retention.ConversationsDays)
				}
				if err := b.Validate(); err != nil {
					t.Fatalf("the runtime refuses a bundle with retention %q: %v", v, err)
				}
			}
			if accepted != 9999 {
				t.Errorf("%s %s accepts %d values of 0d to 10000d, want 1d to 9999d", file, field, accepted)
			}
		}
	}
}

func TestBundleRetention(t *testing.T) {
	for _, tc := range []struct {
		plan, merchant chatv1alpha1.Retention
		want           tenant.Retention
	}{
		{want: tenant.Retention{}},
		{plan: chatv1alpha1.Retention{Conversations: "90d", Leads: "365d"},
			want: tenant.Retention{ConversationsDays: 90, LeadsDays: 365}},
		// The merchant shortens the plan's, and cannot lengthen it.
		{plan: chatv1alpha1.Retention{Conversations: "90d", Leads: "365d"},
			merchant: chatv1alpha1.Retention{Conversations: "30d", Leads: "730d", WebhookDeliveries: "7d"},
			want:     tenant.Retention{ConversationsDays: 30, LeadsDays: 365, WebhookDeliveriesDays: 7}},
	} {
		if got := BundleRetention(tc.plan, tc.merchant); got != tc.want {
			t.Errorf("BundleRetention(%+v, %+v) = %+v, want %+v", tc.plan, tc.merchant, got, tc.want)
		}
	}
}
