package render

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/tenant"
)

func TestMerchantID(t *testing.T) {
	long, longer := strings.Repeat("n", 40), strings.Repeat("m", 40)
	cases := []struct {
		namespace, name, explicit, want string
	}{
		{"acme", "shop", "", "acme-shop"},
		{"acme", "acme", "", "acme"},
		{"acme", "shop", "acme-outdoor", "acme-outdoor"},
		{"acme", "shop.eu", "", "acme-shop-eu"},
		{long, longer, "", long + "-" + strings.Repeat("m", 13) + "-"},
	}
	for _, tc := range cases {
		m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: tc.name}}
		m.Spec.MerchantID = tc.explicit
		got := MerchantID(m)
		if len(got) > 63 {
			t.Errorf("%s/%s: %q is longer than a DNS label", tc.namespace, tc.name, got)
		}
		if strings.HasSuffix(tc.want, "-") {
			// Long IDs end in a hash of namespace/name, so two long names with one prefix do not collide.
			if !strings.HasPrefix(got, tc.want) || len(got) != 63 {
				t.Errorf("%s/%s: got %q", tc.namespace, tc.name, got)
			}
			other := MerchantID(&chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: tc.name + "x"}})
			if other == got {
				t.Errorf("two long names derive the same ID %q", got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s/%s: got %q, want %q", tc.namespace, tc.name, got, tc.want)
		}
	}
}

func TestBundle(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	past := metav1.NewTime(now.Add(-time.Minute))
	soon := metav1.NewTime(now.Add(time.Hour))
	m := &chatv1alpha1.Merchant{
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "shop", UID: "6f1c2b0e-5d1a-4f3e-9a57-0c9b1d2e3f40"},
		Spec: chatv1alpha1.MerchantSpec{
			DisplayName:    "Acme",
			AllowedOrigins: []string{"https://b.example", "https://a.example"},
			Owners:         []chatv1alpha1.Owner{{Email: "o@acme.example"}},
			Widget:         chatv1alpha1.WidgetSpec{Locale: "fr", FixedLocale: true},
		},
	}
	keys := []ResolvedKey{
		{ID: "zz", Type: chatv1alpha1.APIKeySecret, SHA256: strings.Repeat("a", 64)},
		{ID: "aa", Type: chatv1alpha1.APIKeyPublishable, SHA256: strings.Repeat("b", 64), ExpiresAt: &soon},
		{ID: "old", Type: chatv1alpha1.APIKeyPublishable, SHA256: strings.Repeat("c", 64), ExpiresAt: &past},
	}
	secret := "whsec_" + strings.Repeat("A", 44)
	hooks := []ResolvedWebhook{
		{Webhook: &chatv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: chatv1alpha1.WebhookSpec{
			URL: "https://b.example/h", Events: []chatv1alpha1.WebhookEvent{"lead.created", "conversation.created"}}},
			SigningSecrets: []string{secret}},
		{Webhook: &chatv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Name: "off"}, Spec: chatv1alpha1.WebhookSpec{
			URL: "https://off.example/h", Events: []chatv1alpha1.WebhookEvent{"lead.created"}, Disabled: true}},
			SigningSecrets: []string{secret}},
	}
	withHooks := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "enterprise"},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 5, Features: chatv1alpha1.PlanFeatures{Webhooks: true}}}
	without := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "starter"}, Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 5}}

	b := Bundle(m, "acme-shop", withHooks, keys, hooks, now)
	if err := b.Validate(); err != nil {
		t.Fatalf("rendered bundle is invalid: %v", err)
	}
	if got := []string{b.APIKeys[0].ID, b.APIKeys[1].ID}; len(b.APIKeys) != 2 || !slices.Equal(got, []string{"aa", "zz"}) {
		t.Errorf("keys: want aa, zz (sorted, expired one left out), got %+v", b.APIKeys)
	}
	if b.UID != string(m.UID) {
		t.Errorf("the bundle carries UID %q, want the Merchant's: the runtime tells a recreated Merchant by it", b.UID)
	}
	if b.Plan.Burst != 5 || !b.Plan.APIAccess {
		t.Errorf("plan defaults: %+v", b.Plan)
	}
	if !slices.Equal(b.AllowedOrigins, []string{"https://a.example", "https://b.example"}) {
		t.Errorf("origins not sorted: %v", b.AllowedOrigins)
	}
	if len(b.Webhooks) != 1 || b.Webhooks[0].ID != "b" || b.Webhooks[0].Events[0] != tenant.EventConversationCreated {
		t.Errorf("webhooks: want only the enabled one, events sorted: %+v", b.Webhooks)
	}
	if b.Widget.Title != "Acme" || b.Widget.Locale != m.Spec.Widget.Locale || !b.Widget.FixedLocale {
		t.Errorf("widget: the title defaults to the display name, the locale is the merchant's: %+v", b.Widget)
	}
	if nb := Bundle(m, "acme-shop", without, keys, hooks, now); len(nb.Webhooks) != 0 {
		t.Error("a plan without webhooks must render none")
	}
	bounded := without.DeepCopy()
	bounded.Spec.ImportItems, bounded.Spec.ImportBytes = 50, 64<<10
	if nb := Bundle(m, "acme-shop", bounded, keys, hooks, now); nb.Plan.ImportItems != 50 || nb.Plan.ImportBytes != 64<<10 {
		t.Errorf("the plan's import bounds do not reach the bundle: %+v", nb.Plan)
	}
	bounded.Spec.KnowledgeSources, bounded.Spec.PagesPerSource = 3, 40
	bounded.Spec.MinSourceSyncInterval = &metav1.Duration{Duration: 6 * time.Hour}
	if nb := Bundle(m, "acme-shop", bounded, keys, hooks, now); nb.Plan.SourcesLimit() != 3 || nb.Plan.SourcePagesLimit() != 40 ||
		nb.Plan.MinSourceSync() != 6*time.Hour {
		t.Errorf("the plan's source bounds do not reach the bundle: %+v", nb.Plan)
	}
	if b.SelfServiceKeysDisabled {
		t.Error("self-service keys are off by default")
	}
	off := m.DeepCopy()
	off.Spec.DisableSelfServiceKeys = true
	if nb := Bundle(off, "acme-shop", withHooks, keys, hooks, now); !nb.SelfServiceKeysDisabled {
		t.Error("spec.disableSelfServiceKeys does not reach the bundle")
	}

	// The same inputs in another order render the same document, so the Secret is not rewritten needlessly.
	slices.Reverse(keys)
	again, _ := json.Marshal(Bundle(m, "acme-shop", withHooks, keys, hooks, now))
	first, _ := json.Marshal(b)
	if string(again) != string(first) {
		t.Error("the bundle depends on the order of its inputs")
	}
}

func TestNextExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	cases := []struct {
		keys []ResolvedKey
		want time.Duration
	}{
		{nil, 0},
		{[]ResolvedKey{{}}, 0},
		{[]ResolvedKey{{ExpiresAt: at(time.Hour)}, {ExpiresAt: at(time.Minute)}, {}}, time.Minute},
		{[]ResolvedKey{{ExpiresAt: at(-time.Minute)}, {ExpiresAt: at(time.Hour)}}, time.Hour},
	}
	for i, tc := range cases {
		if got := NextExpiry(tc.keys, now); got != tc.want {
			t.Errorf("case %d: got %s, want %s", i, got, tc.want)
		}
	}
}

func TestEmbedSnippet(t *testing.T) {
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "parley-system"}}
	cases := []struct{ public, widget, want string }{
		{"https://chat.example.com/", "", "https://chat.example.com/widget.js"},
		{"https://chat.example.com", "https://cdn.example.com", "https://cdn.example.com/widget.js"},
		{"", "", "http://parley-runtime-default.parley-system.svc/widget.js"},
	}
	for _, tc := range cases {
		rt.Spec.PublicURL, rt.Spec.WidgetURL = tc.public, tc.widget
		want := `<script src="` + tc.want + `" data-api-key="<API_KEY>" data-merchant-id="acme" async></script>`
		if got := EmbedSnippet(rt, "acme"); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

func TestRuntimeReady(t *testing.T) {
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	rt.Spec.Replicas = new(int32(2))
	dep := func(gen, observed int64, updated, available int32) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: available}
		return d
	}
	cases := []struct {
		name string
		d    *appsv1.Deployment
		want metav1.ConditionStatus
	}{
		{"missing", nil, metav1.ConditionFalse},
		{"rolling out", dep(3, 2, 2, 2), metav1.ConditionFalse},
		{"one of two", dep(3, 3, 2, 1), metav1.ConditionFalse},
		{"old pods still serving", dep(3, 3, 1, 2), metav1.ConditionFalse},
		{"all available", dep(3, 3, 2, 2), metav1.ConditionTrue},
	}
	for _, tc := range cases {
		c := RuntimeReady(rt, tc.d)
		if c.Status != tc.want || c.ObservedGeneration != 4 || c.Type != chatv1alpha1.ConditionReady {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// An outage is the time from the last ready replica going to the first being ready again, and only after the
// runtime was ready: a new runtime starting, or one scaled to none, has none.
func TestRuntimeOutage(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(7 * time.Second))
	dep := func(replicas, ready int32) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas}, Status: appsv1.DeploymentStatus{ReadyReplicas: ready}}
	}
	open := &chatv1alpha1.RuntimeOutage{Start: t0}
	earlier := &chatv1alpha1.RuntimeOutage{Start: t0, End: &t0, Duration: &metav1.Duration{}}
	for _, tc := range []struct {
		name     string
		last     *chatv1alpha1.RuntimeOutage
		d        *appsv1.Deployment
		wasReady int32
		want     *chatv1alpha1.RuntimeOutage
	}{
		{"a new runtime starting", nil, dep(1, 0), 0, nil},
		{"serving", nil, dep(1, 1), 1, nil},
		{"the last replica goes", nil, dep(1, 0), 1, &chatv1alpha1.RuntimeOutage{Start: t1}},
		{"one of two goes", nil, dep(2, 1), 2, nil},
		{"still down", open, dep(1, 0), 0, open},
		{"ready again", open, dep(1, 1), 0, &chatv1alpha1.RuntimeOutage{Start: t0, End: &t1, Duration: &metav1.Duration{Duration: 7 * time.Second}}},
		{"scaled to none", nil, dep(0, 0), 1, nil},
		{"the Deployment is gone", earlier, nil, 1, earlier},
		{"a later outage replaces an earlier one", earlier, dep(1, 0), 1, &chatv1alpha1.RuntimeOutage{Start: t1}},
	} {
		got := RuntimeOutage(tc.last, tc.d, tc.wasReady, t1)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// PostgreSQL runtimes roll a new pod up before an old one goes; SQLite runtimes cannot share their volume.
func TestRuntimeStrategy(t *testing.T) {
	pg := &chatv1alpha1.ChatRuntime{Spec: chatv1alpha1.ChatRuntimeSpec{Storage: chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres}}}
	s := RuntimeDeployment(pg, "parley:test").Spec.Strategy
	if *s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
		s.RollingUpdate.MaxSurge.IntValue() != 1 {
		t.Errorf("a PostgreSQL runtime's strategy: %s %+v", *s.Type, s.RollingUpdate)
	}
	s = RuntimeDeployment(&chatv1alpha1.ChatRuntime{}, "parley:test").Spec.Strategy
	if *s.Type != appsv1.RecreateDeploymentStrategyType || s.RollingUpdate != nil {
		t.Errorf("a SQLite runtime's strategy: %s %+v", *s.Type, s.RollingUpdate)
	}
}

func TestRuntimeArgs(t *testing.T) {
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "parley-system"}}
	rt.Spec.Storage.Type = chatv1alpha1.StorageSQLite
	rt.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantRetrieval}
	rt.Spec.TLS = &chatv1alpha1.TLSSpec{SecretName: "cert"}
	args := RuntimeArgs(rt)
	for _, want := range []string{"runtime", "--namespace=parley-system", "--runtime-name=default", "--storage=sqlite",
		"--sqlite-path=/var/lib/parley/parley.db", "--assistant=retrieval", "--tls-cert-file=/etc/parley/tls/tls.crt"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	d := RuntimeDeployment(rt, "img")
	c := d.Spec.Template.Spec.Containers[0]
	if probe := c.LivenessProbe.HTTPGet; *probe.Scheme != "HTTPS" {
		t.Errorf("probes must use HTTPS when the runtime serves TLS, got %s", *probe.Scheme)
	}
	// A migration of a large database runs before the runtime listens: the startup probe waits minutes for it.
	if s := c.StartupProbe; s == nil || *s.HTTPGet.Path != "/healthz" ||
		time.Duration(*s.PeriodSeconds**s.FailureThreshold)*time.Second < 5*time.Minute {
		t.Errorf("startup probe %+v, want /healthz waiting at least 5 minutes", s)
	}
	if s := RuntimeService(rt); *s.Spec.Ports[0].Port != 443 {
		t.Errorf("service port %d with TLS", *s.Spec.Ports[0].Port)
	}
}

func TestIndexCacheBytes(t *testing.T) {
	mem := func(requests, limits string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}
		if requests != "" {
			r.Requests[corev1.ResourceMemory] = resource.MustParse(requests)
		}
		if limits != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limits)}
		}
		return r
	}
	tests := []struct {
		name      string
		resources corev1.ResourceRequirements
		want      int64
	}{
		{"the default resources: a quarter of the 256Mi request", corev1.ResourceRequirements{}, 64 << 20},
		{"a quarter of the request", mem("1Gi", "4Gi"), 256 << 20},
		{"an eighth of the limit without a request", mem("", "2Gi"), 256 << 20},
		{"neither: the runtime's default", mem("", ""), 0},
		{"a zero request: the limit", mem("0", "1Gi"), 128 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{Spec: chatv1alpha1.ChatRuntimeSpec{Resources: tt.resources}}
			if got := IndexCacheBytes(rt); got != tt.want {
				t.Errorf("IndexCacheBytes = %d, want %d", got, tt.want)
			}
		})
	}
}

// The runtime's Go memory limit follows its container's memory limit, when it has one.
func TestRuntimeMemoryLimitEnv(t *testing.T) {
	for _, tt := range []struct {
		name      string
		resources corev1.ResourceRequirements
		want      bool
	}{
		{"the default resources have a limit", corev1.ResourceRequirements{}, true},
		{"a limit", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}, true},
		{"a request alone", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{Spec: chatv1alpha1.ChatRuntimeSpec{Resources: tt.resources}}
			c := RuntimeDeployment(rt, "parley:test").Spec.Template.Spec.Containers[0]
			i := slices.IndexFunc(c.Env, func(e corev1ac.EnvVarApplyConfiguration) bool { return *e.Name == contract.EnvMemoryLimit })
			if (i >= 0) != tt.want {
				t.Fatalf("$%s set: %v, want %v", contract.EnvMemoryLimit, i >= 0, tt.want)
			}
			if i >= 0 {
				r := c.Env[i].ValueFrom.ResourceFieldRef
				if r == nil || *r.Resource != "limits.memory" || *r.ContainerName != *c.Name {
					t.Errorf("$%s is not the container's memory limit: %+v", contract.EnvMemoryLimit, c.Env[i].ValueFrom)
				}
			}
		})
	}
}

// Everything rendered for a runtime, its tenant bundles included, goes to its target namespace; the Role and
// RoleBinding grant the runtime's own ServiceAccount there. Only objects in the ChatRuntime's own namespace name it
// as owner: the garbage collector would delete an object whose owner is in another namespace.
func TestRuntimeTargetNamespace(t *testing.T) {
	two := int32(2)
	for _, tc := range []struct {
		name, target, want string
		owned              bool
	}{
		{name: "none: the ChatRuntime's namespace", want: "parley-system", owned: true},
		{name: "a namespace of its own", target: "parley-runtime", want: "parley-runtime"},
		{name: "its own namespace named", target: "parley-system", want: "parley-system", owned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "parley-system", UID: "u"}}
			rt.Spec.TargetNamespace = tc.target
			rt.Spec.Storage.Type = chatv1alpha1.StoragePostgres
			rt.Spec.Replicas = &two
			rt.Spec.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: &two, MaxReplicas: 4}
			type placed struct {
				kind      string
				namespace *string
				owners    int
			}
			rb := RuntimeRoleBinding(rt)
			objs := []placed{
				{"ServiceAccount", RuntimeServiceAccount(rt).Namespace, len(RuntimeServiceAccount(rt).OwnerReferences)},
				{"Role", RuntimeRole(rt).Namespace, len(RuntimeRole(rt).OwnerReferences)},
				{"RoleBinding", rb.Namespace, len(rb.OwnerReferences)},
				{"RoleBinding subject", rb.Subjects[0].Namespace, 1},
				{"Service", RuntimeService(rt).Namespace, len(RuntimeService(rt).OwnerReferences)},
				{"NetworkPolicy", RuntimeNetworkPolicy(rt).Namespace, len(RuntimeNetworkPolicy(rt).OwnerReferences)},
				{"PodDisruptionBudget", RuntimePodDisruptionBudget(rt).Namespace, len(RuntimePodDisruptionBudget(rt).OwnerReferences)},
				{"HorizontalPodAutoscaler", RuntimeHorizontalPodAutoscaler(rt).Namespace, len(RuntimeHorizontalPodAutoscaler(rt).OwnerReferences)},
				{"Deployment", RuntimeDeployment(rt, "img").Namespace, len(RuntimeDeployment(rt, "img").OwnerReferences)},
			}
			for _, o := range objs {
				if *o.namespace != tc.want {
					t.Errorf("%s in %s, want %s", o.kind, *o.namespace, tc.want)
				}
				if o.kind != "RoleBinding subject" && (o.owners == 1) != tc.owned {
					t.Errorf("%s has %d owner references, owned %v", o.kind, o.owners, tc.owned)
				}
			}
			if s := BundleSecret(rt, "shop", "acme/shop", []byte("{}")); s.Namespace != tc.want {
				t.Errorf("tenant bundle in %s, want %s", s.Namespace, tc.want)
			}
			if !slices.Contains(RuntimeArgs(rt), "--namespace="+tc.want) {
				t.Errorf("the runtime reads bundles elsewhere: %v", RuntimeArgs(rt))
			}
		})
	}
}

func TestWithdrawnKeys(t *testing.T) {
	many := make([]string, maxWithdrawnKeys+5)
	for i := range many {
		many[i] = fmt.Sprintf("h%03d", i)
	}
	for _, tc := range []struct {
		name, earlier string
		before, now   []string
		want          string
	}{
		{"nothing withdrawn", "", []string{"a", "b"}, []string{"a", "b", "c"}, ""},
		{"a key deleted", "", []string{"a", "b"}, []string{"a"}, "b"},
		{"newest first, earlier kept", "x y", []string{"a", "b"}, []string{"b"}, "a x y"},
		{"a withdrawn key published again", "a x", []string{"b"}, []string{"a", "b"}, "x"},
		{"no repeats", "a", []string{"a"}, nil, "a"},
		{"every key of a deleted merchant", "", []string{"a", "b"}, nil, "a b"},
		{"bounded, the oldest forgotten", strings.Join(many[1:], " "), many[:1], nil, strings.Join(many[:maxWithdrawnKeys], " ")},
	} {
		if got := WithdrawnKeys(tc.earlier, tc.before, tc.now); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The metrics port (every merchant's name and usage) is reachable from the operator's namespace and the
// namespaces the platform team selects, never from a tenant's; the public port from anyone.
func TestRuntimeNetworkPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selector *metav1.LabelSelector
		want     string // the peers of the metrics port
	}{
		{name: "the operator only", want: `[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"parley-system"}}}]`},
		{name: "and the monitoring namespace",
			selector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}},
			want: `[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"parley-system"}}},` +
				`{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}]`},
		{name: "by expression",
			selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"sre", "obs"}}}},
			want: `[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"parley-system"}}},` +
				`{"namespaceSelector":{"matchExpressions":[{"key":"team","operator":"In","values":["sre","obs"]}]}}]`},
		{name: "every namespace", selector: &metav1.LabelSelector{},
			want: `[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"parley-system"}}},{"namespaceSelector":{}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "parley-system"}}
			rt.Spec.TargetNamespace = "parley-runtime"
			rt.Spec.Metrics.AllowedNamespaces = tc.selector
			np := RuntimeNetworkPolicy(rt)
			data, err := json.Marshal(np.Spec)
			if err != nil {
				t.Fatal(err)
			}
			var spec networkingv1.NetworkPolicySpec
			if err := json.Unmarshal(data, &spec); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(spec.PodSelector.MatchLabels); got != "map[app.kubernetes.io/instance:blue app.kubernetes.io/name:parley-runtime]" {
				t.Errorf("pods selected: %s", got)
			}
			if len(spec.PolicyTypes) != 1 || spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress || len(spec.Ingress) != 2 {
				t.Fatalf("policy %s", data)
			}
			public, metrics := spec.Ingress[0], spec.Ingress[1]
			if len(public.From) != 0 || len(public.Ports) != 1 || public.Ports[0].Port.String() != "http" {
				t.Errorf("the public port is not open to all: %+v", public)
			}
			if len(metrics.Ports) != 1 || metrics.Ports[0].Port.String() != "metrics" {
				t.Errorf("the metrics rule is for ports %+v", metrics.Ports)
			}
			peers, err := json.Marshal(metrics.From)
			if err != nil {
				t.Fatal(err)
			}
			if string(peers) != tc.want {
				t.Errorf("metrics admitted from\n %s\nwant\n %s", peers, tc.want)
			}
		})
	}
}

// TestSources: every field of a KnowledgeSource reaches its bundle, in name order; the defaults are the runtime's
// (0), a source being deleted is left out, and the bundle with them is one the runtime accepts.
func TestSources(t *testing.T) {
	deleting := metav1.Now()
	list := []chatv1alpha1.KnowledgeSource{
		{ObjectMeta: metav1.ObjectMeta{Name: "help", Generation: 3}, Spec: chatv1alpha1.KnowledgeSourceSpec{
			Type: chatv1alpha1.KnowledgeSourceWebsite, URL: "https://shop.example/help/", Include: []string{"/help/*"},
			Exclude: []string{"/help/old/*"}, MaxPages: 200, SyncInterval: &metav1.Duration{Duration: 6 * time.Hour}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "docs", Generation: 1}, Spec: chatv1alpha1.KnowledgeSourceSpec{
			Type: chatv1alpha1.KnowledgeSourceGit, URL: "https://git.example/docs.git", Ref: "v2"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "blog", Generation: 1}, Spec: chatv1alpha1.KnowledgeSourceSpec{URL: "https://shop.example/blog/"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "gone", Generation: 1, DeletionTimestamp: &deleting, Finalizers: []string{"x"}},
			Spec: chatv1alpha1.KnowledgeSourceSpec{URL: "https://shop.example/"}},
	}
	got := Sources(list)
	want := []tenant.Source{
		{ID: "blog", Generation: 1, Type: tenant.SourceWebsite, URL: "https://shop.example/blog/"},
		{ID: "docs", Generation: 1, Type: tenant.SourceGit, URL: "https://git.example/docs.git", Ref: "v2"},
		{ID: "help", Generation: 3, Type: tenant.SourceWebsite, URL: "https://shop.example/help/", Include: []string{"/help/*"},
			Exclude: []string{"/help/old/*"}, MaxPages: 200, SyncIntervalSeconds: 6 * 3600},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sources:\n got %+v\nwant %+v", got, want)
	}
	if Sources(nil) != nil {
		t.Error("no KnowledgeSources render sources")
	}
	m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "shop"}, Spec: chatv1alpha1.MerchantSpec{DisplayName: "Acme"}}
	b := Bundle(m, "acme", &chatv1alpha1.Plan{Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 1}}, nil, nil, time.Now())
	b.Sources = got
	if _, err := tenant.Marshal(b); err != nil {
		t.Errorf("the runtime refuses the bundle with its sources: %v", err)
	}
}
