package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

const (
	httpPort       = 8080
	metricsPort    = 9090
	dataDir        = "/var/lib/parley"
	tlsDir         = "/etc/parley/tls"
	defaultSQLSize = "1Gi"
	runAsUser      = 65532 // the distroless "nonroot" user
)

// replicas is the desired replica count; the API server defaults it to 1.
func replicas(rt *chatv1alpha1.ChatRuntime) int32 {
	if rt.Spec.Replicas == nil {
		return 1
	}
	return *rt.Spec.Replicas
}

// minReplicas is the fewest replicas the runtime runs with: spec.replicas, or the autoscaler's minimum.
func minReplicas(rt *chatv1alpha1.ChatRuntime) int32 {
	a := rt.Spec.Autoscaling
	switch {
	case a == nil:
		return replicas(rt)
	case a.MinReplicas == nil:
		return 1
	default:
		return *a.MinReplicas
	}
}

// ServiceName is the name of the runtime's Deployment, Service, ServiceAccount, Role and PodDisruptionBudget.
func ServiceName(rt *chatv1alpha1.ChatRuntime) string { return "parley-runtime-" + rt.Name }

// MetricsAddress is the host:port of the runtime's metrics listener through its Service, in the cluster's DNS,
// where the operator reads the runtime's usage report.
func MetricsAddress(rt *chatv1alpha1.ChatRuntime) string {
	return fmt.Sprintf("%s.%s.svc:%d", ServiceName(rt), rt.Namespace, metricsPort)
}

// DataClaimName is the PersistentVolumeClaim that holds a SQLite runtime's database.
func DataClaimName(rt *chatv1alpha1.ChatRuntime) string { return ServiceName(rt) + "-data" }

// Labels the operator finds a runtime's objects by.
const (
	// InstanceLabel names the ChatRuntime an object was rendered for.
	InstanceLabel = "app.kubernetes.io/instance"
	// ManagedByLabel is FieldOwner on every object the operator renders.
	ManagedByLabel = "app.kubernetes.io/managed-by"
)

// RuntimeLabels are the operator's own labels on everything it renders for a runtime. The ChatRuntime's labels
// are deliberately not copied: GitOps tools would then prune or fight the generated objects.
func RuntimeLabels(rt *chatv1alpha1.ChatRuntime) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "parley-runtime",
		InstanceLabel:                 rt.Name,
		"app.kubernetes.io/component": "runtime",
		ManagedByLabel:                FieldOwner,
	}
}

func selectorLabels(rt *chatv1alpha1.ChatRuntime) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "parley-runtime", "app.kubernetes.io/instance": rt.Name}
}

// TargetNamespace is where a runtime's workload and tenant bundles live: spec.targetNamespace, or the
// ChatRuntime's own namespace.
func TargetNamespace(rt *chatv1alpha1.ChatRuntime) string {
	if rt.Spec.TargetNamespace != "" {
		return rt.Spec.TargetNamespace
	}
	return rt.Namespace
}

// owners makes the ChatRuntime the controller of an object in its own namespace. In a target namespace of its
// own there is none: the garbage collector deletes a namespaced object whose owner is in another namespace, so
// the operator deletes those objects itself.
func owners(rt *chatv1alpha1.ChatRuntime) []*metav1ac.OwnerReferenceApplyConfiguration {
	if TargetNamespace(rt) != rt.Namespace {
		return nil
	}
	return []*metav1ac.OwnerReferenceApplyConfiguration{metav1ac.OwnerReference().
		WithAPIVersion(chatv1alpha1.GroupVersion.String()).WithKind("ChatRuntime").
		WithName(rt.Name).WithUID(rt.UID).WithController(true).WithBlockOwnerDeletion(true)}
}

// RuntimeServiceAccount is the identity the runtime's pods use to watch their tenant bundles.
func RuntimeServiceAccount(rt *chatv1alpha1.ChatRuntime) *corev1ac.ServiceAccountApplyConfiguration {
	return corev1ac.ServiceAccount(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...)
}

// RuntimeRole lets the runtime read Secrets in its own namespace, and nothing else. The label selector for
// tenant bundles is applied by the runtime's informer; RBAC cannot express label selectors.
func RuntimeRole(rt *chatv1alpha1.ChatRuntime) *rbacv1ac.RoleApplyConfiguration {
	return rbacv1ac.Role(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithRules(rbacv1ac.PolicyRule().
			WithAPIGroups("").WithResources("secrets").WithVerbs("get", "list", "watch"))
}

// RuntimeRoleBinding grants RuntimeRole to RuntimeServiceAccount.
func RuntimeRoleBinding(rt *chatv1alpha1.ChatRuntime) *rbacv1ac.RoleBindingApplyConfiguration {
	return rbacv1ac.RoleBinding(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithRoleRef(rbacv1ac.RoleRef().
			WithAPIGroup("rbac.authorization.k8s.io").WithKind("Role").WithName(ServiceName(rt))).
		WithSubjects(rbacv1ac.Subject().
			WithKind("ServiceAccount").WithName(ServiceName(rt)).WithNamespace(TargetNamespace(rt)))
}

// RuntimeService exposes the runtime's HTTP (or HTTPS, with spec.tls) port inside the cluster.
func RuntimeService(rt *chatv1alpha1.ChatRuntime) *corev1ac.ServiceApplyConfiguration {
	port, name := int32(80), "http"
	if rt.Spec.TLS != nil {
		port, name = 443, "https"
	}
	return corev1ac.Service(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithSpec(corev1ac.ServiceSpec().
			WithType(corev1.ServiceTypeClusterIP).
			WithSelector(selectorLabels(rt)).
			WithPorts(corev1ac.ServicePort().
				WithName(name).WithPort(port).WithProtocol(corev1.ProtocolTCP).
				WithTargetPort(intstr.FromString("http")),
				// For Prometheus inside the cluster; an ingress routes only the port above.
				corev1ac.ServicePort().
					WithName("metrics").WithPort(metricsPort).WithProtocol(corev1.ProtocolTCP).
					WithTargetPort(intstr.FromString("metrics"))))
}

// RuntimeDataClaim is the volume of a SQLite runtime, or nil for PostgreSQL.
func RuntimeDataClaim(rt *chatv1alpha1.ChatRuntime) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	if rt.Spec.Storage.Type == chatv1alpha1.StoragePostgres {
		return nil
	}
	size := resource.MustParse(defaultSQLSize)
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce)
	if s := rt.Spec.Storage.SQLite; s != nil {
		if s.Size != nil {
			size = *s.Size
		}
		if s.StorageClassName != nil {
			spec = spec.WithStorageClassName(*s.StorageClassName)
		}
	}
	spec = spec.WithResources(corev1ac.VolumeResourceRequirements().
		WithRequests(corev1.ResourceList{corev1.ResourceStorage: size}))
	// No owner reference: deleting a ChatRuntime must not delete its conversations with it.
	return corev1ac.PersistentVolumeClaim(DataClaimName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithSpec(spec)
}

// RuntimePodDisruptionBudget keeps one replica serving during voluntary disruptions; nil when the runtime may
// run a single replica (spec.replicas, or autoscaling.minReplicas, of one), where a budget would block node
// drains forever.
func RuntimePodDisruptionBudget(rt *chatv1alpha1.ChatRuntime) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	if minReplicas(rt) <= 1 {
		return nil
	}
	return policyv1ac.PodDisruptionBudget(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMaxUnavailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(rt))))
}

// RuntimeArgs are the `parley runtime` arguments for a ChatRuntime.
func RuntimeArgs(rt *chatv1alpha1.ChatRuntime) []string {
	args := []string{
		contract.RuntimeCommand,
		contract.Arg(contract.FlagNamespace, TargetNamespace(rt)),
		contract.Arg(contract.FlagRuntimeName, rt.Name),
		contract.Arg(contract.FlagListen, fmt.Sprintf(":%d", httpPort)),
		contract.Arg(contract.FlagMetricsListen, fmt.Sprintf(":%d", metricsPort)),
		contract.Arg(contract.FlagStorage, string(rt.Spec.Storage.Type)),
		contract.Arg(contract.FlagAssistant, string(rt.Spec.Assistant.Provider)),
	}
	if rt.Spec.PublicURL != "" {
		args = append(args, contract.Arg(contract.FlagPublicURL, rt.Spec.PublicURL))
	}
	if rt.Spec.WidgetURL != "" {
		args = append(args, contract.Arg(contract.FlagWidgetURL, rt.Spec.WidgetURL))
	}
	if rt.Spec.Storage.Type != chatv1alpha1.StoragePostgres {
		args = append(args, contract.Arg(contract.FlagSQLitePath, dataDir+"/parley.db"))
	}
	args = append(args, backupArgs(rt)...)
	if o := rt.Spec.OIDC; o != nil {
		args = append(args, contract.Arg(contract.FlagOIDCIssuer, o.IssuerURL), contract.Arg(contract.FlagOIDCAudience, o.Audience))
	}
	if rt.Spec.TLS != nil {
		args = append(args, contract.Arg(contract.FlagTLSCertFile, tlsDir+"/tls.crt"), contract.Arg(contract.FlagTLSKeyFile, tlsDir+"/tls.key"))
	}
	if len(rt.Spec.TrustedProxies) > 0 {
		args = append(args, contract.Arg(contract.FlagTrustedProxies, strings.Join(rt.Spec.TrustedProxies, ",")))
	}
	if rt.Spec.Webhooks.AllowPrivateAddresses {
		args = append(args, contract.BoolArg(contract.FlagWebhookAllowPrivate))
	}
	if n := IndexCacheBytes(rt); n > 0 {
		args = append(args, contract.Arg(contract.FlagIndexCacheBytes, strconv.FormatInt(n, 10)))
	}
	if d := rt.Spec.DeletedMerchantRetention; d != nil {
		args = append(args, contract.Arg(contract.FlagDeletedMerchantRetention, d.Duration.String()))
	}
	args = append(args, openAIArgs(rt)...)
	if ps := rt.Spec.Assistant.Providers; len(ps) > 0 {
		args = append(args, contract.Arg(contract.FlagProviders, providersArg(ps)))
	}
	if r := redisRateLimiter(rt); r != nil {
		args = append(args, contract.Arg(contract.FlagRedisAddress, r.Address))
		if r.TLS {
			args = append(args, contract.BoolArg(contract.FlagRedisTLS))
		}
		if r.KeyPrefix != "" {
			args = append(args, contract.Arg(contract.FlagRedisKeyPrefix, r.KeyPrefix))
		}
	}
	return args
}

// openAIArgs are the openai provider's arguments; the runtime's defaults stand for the fields left out.
func openAIArgs(rt *chatv1alpha1.ChatRuntime) []string {
	o := openAISpec(rt)
	if o == nil {
		return nil
	}
	args := []string{contract.Arg(contract.FlagOpenAIBaseURL, o.BaseURL), contract.Arg(contract.FlagOpenAIModel, o.Model)}
	for _, f := range []struct {
		flag  string
		value *metav1.Duration
	}{
		{contract.FlagOpenAITimeout, o.Timeout},
		{contract.FlagOpenAIFirstTokenTimeout, o.FirstTokenTimeout},
		{contract.FlagOpenAIIdleTimeout, o.IdleTimeout},
	} {
		if f.value != nil {
			args = append(args, contract.Arg(f.flag, f.value.Duration.String()))
		}
	}
	if o.Temperature != "" {
		args = append(args, contract.Arg(contract.FlagOpenAITemperature, o.Temperature))
	}
	if o.AzureAPIVersion != "" {
		args = append(args, contract.Arg(contract.FlagOpenAIAzureAPIVersion, o.AzureAPIVersion))
	}
	if o.MaxCompletionTokens {
		args = append(args, contract.BoolArg(contract.FlagOpenAIMaxCompletionTokens))
	}
	if o.OmitTemperature {
		args = append(args, contract.BoolArg(contract.FlagOpenAIOmitTemperature))
	}
	for _, f := range []struct {
		flag  string
		value *int32
	}{
		{contract.FlagOpenAIMaxTokens, o.MaxTokens},
		{contract.FlagOpenAIContextItems, o.ContextItems},
		{contract.FlagOpenAIHistoryTokens, o.HistoryTokens},
		{contract.FlagOpenAIContextWindow, o.ContextWindow},
	} {
		if f.value != nil {
			args = append(args, contract.Arg(f.flag, strconv.Itoa(int(*f.value))))
		}
	}
	if e := o.Embeddings; e != nil {
		ce := embeddings(e)
		args = append(args, contract.Arg(contract.FlagOpenAIEmbeddingsModel, ce.Model))
		if ce.Dimensions != 0 {
			args = append(args, contract.Arg(contract.FlagOpenAIEmbeddingsDims, strconv.Itoa(ce.Dimensions)))
		}
		if ce.BatchSize != 0 {
			args = append(args, contract.Arg(contract.FlagOpenAIEmbeddingsBatchSize, strconv.Itoa(ce.BatchSize)))
		}
	}
	return args
}

// embeddings is an embedding model's settings as the runtime takes them, 0 for those left to its defaults.
func embeddings(e *chatv1alpha1.EmbeddingsSpec) contract.Embeddings {
	out := contract.Embeddings{Model: e.Model}
	if e.Dimensions != nil {
		out.Dimensions = int(*e.Dimensions)
	}
	if e.BatchSize != nil {
		out.BatchSize = int(*e.BatchSize)
	}
	return out
}

// providersArg is --providers for the ChatRuntime's providers; the runtime's defaults stand for the settings
// left out, and the keys go by environment (runtimeEnv).
func providersArg(specs []chatv1alpha1.ModelProviderSpec) string {
	ps := make(contract.Providers, 0, len(specs))
	for _, s := range specs {
		p := contract.Provider{Name: s.Name, BaseURL: s.BaseURL, AzureAPIVersion: s.AzureAPIVersion}
		for _, m := range s.Models {
			p.Models = append(p.Models, providerModel(m))
		}
		if s.Embeddings != nil {
			e := embeddings(s.Embeddings)
			p.Embeddings = &e
		}
		ps = append(ps, p)
	}
	return ps.String()
}

// providerModel is a model's settings as --providers takes them.
func providerModel(m chatv1alpha1.ProviderModelSpec) contract.Model {
	out := contract.Model{Name: m.Name, MaxCompletionTokens: m.MaxCompletionTokens, OmitTemperature: m.OmitTemperature}
	for _, d := range []struct {
		to   *contract.Duration
		from *metav1.Duration
	}{{&out.Timeout, m.Timeout}, {&out.FirstTokenTimeout, m.FirstTokenTimeout}, {&out.IdleTimeout, m.IdleTimeout}} {
		if d.from != nil {
			d.to.Duration = d.from.Duration
		}
	}
	if t, err := strconv.ParseFloat(m.Temperature, 64); err == nil { // the CRD's pattern makes it a number, or empty
		out.Temperature = &t
	}
	if m.MaxTokens != nil {
		out.MaxTokens = int(*m.MaxTokens)
	}
	if m.ContextWindow != nil {
		out.ContextWindow = int(*m.ContextWindow)
	}
	return out
}

// openAISpec is the openai provider's configuration when the runtime answers with it, or nil.
func openAISpec(rt *chatv1alpha1.ChatRuntime) *chatv1alpha1.OpenAISpec {
	if rt.Spec.Assistant.Provider != chatv1alpha1.AssistantOpenAI {
		return nil
	}
	return rt.Spec.Assistant.OpenAI
}

func redisRateLimiter(rt *chatv1alpha1.ChatRuntime) *chatv1alpha1.RedisRateLimiter {
	if rt.Spec.RateLimiter == nil {
		return nil
	}
	return rt.Spec.RateLimiter.Redis
}

// runtimeContainer is the name of the runtime Deployment's container.
const runtimeContainer = "runtime"

// runtimeEnv carries secrets by reference, so that they never appear in the Deployment itself.
func runtimeEnv(rt *chatv1alpha1.ChatRuntime) []*corev1ac.EnvVarApplyConfiguration {
	var env []*corev1ac.EnvVarApplyConfiguration
	fromSecret := func(name string, ref chatv1alpha1.SecretKeySelector, defKey string) {
		env = append(env, corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(ref.Name).WithKey(ref.KeyOr(defKey)))))
	}
	if p := rt.Spec.Storage.Postgres; p != nil && rt.Spec.Storage.Type == chatv1alpha1.StoragePostgres {
		fromSecret(contract.EnvDatabaseURL, p.URLSecretRef, "url")
	}
	if r := redisRateLimiter(rt); r != nil && r.PasswordSecretRef != nil {
		fromSecret(contract.EnvRedisPassword, *r.PasswordSecretRef, chatv1alpha1.DefaultRedisPasswordKey)
	}
	if o := openAISpec(rt); o != nil && o.APIKeySecretRef != nil {
		fromSecret(contract.EnvOpenAIAPIKey, *o.APIKeySecretRef, chatv1alpha1.DefaultOpenAIAPIKeyKey)
	}
	for _, p := range rt.Spec.Assistant.Providers {
		if p.APIKeySecretRef != nil {
			fromSecret(contract.EnvProviderAPIKey(p.Name), *p.APIKeySecretRef, chatv1alpha1.DefaultOpenAIAPIKeyKey)
		}
	}
	if o := rt.Spec.OIDC; o != nil && o.SessionKeySecretRef != nil {
		fromSecret(contract.EnvSessionKey, *o.SessionKeySecretRef, chatv1alpha1.DefaultSessionKeyKey)
	}
	if q, ok := runtimeResources(rt.Spec.Resources).Limits[corev1.ResourceMemory]; ok && !q.IsZero() {
		// The Go runtime's soft memory limit follows the container's (contract.MemoryLimit); from the downward
		// API, so that a limit changed by hand or by an autoscaler is followed too.
		env = append(env, corev1ac.EnvVar().WithName(contract.EnvMemoryLimit).WithValueFrom(corev1ac.EnvVarSource().
			WithResourceFieldRef(corev1ac.ResourceFieldSelector().WithContainerName(runtimeContainer).WithResource("limits.memory"))))
	}
	return env
}

// startupTimeout is how long the runtime may take to start, migrations included, probed every startupPeriod
// seconds.
const (
	startupTimeout = 10 * time.Minute
	startupPeriod  = 5
)

// RuntimeDeployment renders the chat runtime's Deployment: a restricted pod (non-root, read-only root
// filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp) with health probes.
func RuntimeDeployment(rt *chatv1alpha1.ChatRuntime, defaultImage string) *appsv1ac.DeploymentApplyConfiguration {
	image := rt.Spec.Image
	if image == "" {
		image = defaultImage
	}
	probe := func(path string, period int32) *corev1ac.ProbeApplyConfiguration {
		scheme := corev1.URISchemeHTTP
		if rt.Spec.TLS != nil {
			scheme = corev1.URISchemeHTTPS
		}
		return corev1ac.Probe().WithPeriodSeconds(period).WithTimeoutSeconds(2).WithFailureThreshold(3).
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString("http")).WithScheme(scheme))
	}
	container := corev1ac.Container().
		WithName(runtimeContainer).
		WithImage(image).
		WithArgs(RuntimeArgs(rt)...).
		WithEnv(runtimeEnv(rt)...).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(httpPort).WithProtocol(corev1.ProtocolTCP),
			corev1ac.ContainerPort().WithName("metrics").WithContainerPort(metricsPort).WithProtocol(corev1.ProtocolTCP)).
		// The store migrates its schema before the runtime listens: the startup probe gives a migration of a large
		// database (an index on the messages, say) startupTimeout, where the liveness probe alone would restart
		// the pod after 30 seconds and roll the migration back, again and again.
		WithStartupProbe(probe("/healthz", startupPeriod).WithFailureThreshold(int32(startupTimeout / (startupPeriod * time.Second)))).
		WithLivenessProbe(probe("/healthz", 10)).
		WithReadinessProbe(probe("/readyz", 5)).
		WithResources(resources(rt.Spec.Resources)).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithRunAsNonRoot(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"))
	if rt.Spec.ImagePullPolicy != "" {
		container = container.WithImagePullPolicy(rt.Spec.ImagePullPolicy)
	}

	volumes := []*corev1ac.VolumeApplyConfiguration{
		corev1ac.Volume().WithName("tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
	}
	// Shared storage lets old and new pods serve side by side: a new pod starts before an old one stops, so a
	// rollout (an operator upgrade moving the default image, say) leaves no moment without a ready replica.
	strategy := appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
		WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
			WithMaxUnavailable(intstr.FromInt32(0)).WithMaxSurge(intstr.FromInt32(1)))
	if rt.Spec.Storage.Type != chatv1alpha1.StoragePostgres {
		// One writer on a ReadWriteOnce volume: the old pod must stop before the new one opens the database.
		strategy = appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)
		volumes = append(volumes, corev1ac.Volume().WithName("data").
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(DataClaimName(rt))))
		container = container.WithVolumeMounts(corev1ac.VolumeMount().WithName("data").WithMountPath(dataDir))
	}
	if v := backupVolume(rt); v != nil {
		volumes = append(volumes, v)
		container = container.WithVolumeMounts(corev1ac.VolumeMount().WithName(*v.Name).WithMountPath(backupDir))
	}
	if t := rt.Spec.TLS; t != nil {
		volumes = append(volumes, corev1ac.Volume().WithName("tls").
			WithSecret(corev1ac.SecretVolumeSource().WithSecretName(t.SecretName)))
		container = container.WithVolumeMounts(corev1ac.VolumeMount().WithName("tls").WithMountPath(tlsDir).WithReadOnly(true))
	}

	spec := appsv1ac.DeploymentSpec()
	if rt.Spec.Autoscaling == nil {
		// With autoscaling the replica count is left out, so that the operator does not own it and never undoes
		// what the HorizontalPodAutoscaler sets.
		spec = spec.WithReplicas(replicas(rt))
	}
	return appsv1ac.Deployment(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithSpec(spec.
			WithStrategy(strategy).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(rt))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(RuntimeLabels(rt)).
				WithSpec(corev1ac.PodSpec().
					WithServiceAccountName(ServiceName(rt)).
					WithTerminationGracePeriodSeconds(30).
					WithSecurityContext(corev1ac.PodSecurityContext().
						WithRunAsNonRoot(true).
						WithRunAsUser(runAsUser).
						WithRunAsGroup(runAsUser).
						WithFSGroup(runAsUser).
						WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
					WithContainers(container).
					WithVolumes(volumes...))))
}

func resources(r corev1.ResourceRequirements) *corev1ac.ResourceRequirementsApplyConfiguration {
	r = runtimeResources(r)
	out := corev1ac.ResourceRequirements()
	if len(r.Requests) > 0 {
		out = out.WithRequests(r.Requests)
	}
	if len(r.Limits) > 0 {
		out = out.WithLimits(r.Limits)
	}
	return out
}

// runtimeResources are the runtime container's resources: the ChatRuntime's, or defaults when it sets none. The
// memory request is what test/memory measures a runtime needs with a merchant at the default knowledgeCharacters
// and a full index cache, with room to spare.
func runtimeResources(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		}
	}
	return r
}

// IndexCacheBytes is the runtime's --index-cache-bytes for a ChatRuntime: a quarter of the runtime container's
// memory request, so that the kept indexes, an index being rebuilt beside its old one, the garbage collector's
// headroom and the rest of the process fit in what the scheduler set aside; with no memory request, an eighth of
// the memory limit; with neither, 0, and the flag is left out.
func IndexCacheBytes(rt *chatv1alpha1.ChatRuntime) int64 {
	r := runtimeResources(rt.Spec.Resources)
	if q, ok := r.Requests[corev1.ResourceMemory]; ok && !q.IsZero() {
		return q.Value() / 4
	}
	if q, ok := r.Limits[corev1.ResourceMemory]; ok && !q.IsZero() {
		return q.Value() / 8
	}
	return 0
}

// desiredReplicas is how many replicas must be available for the runtime to be Ready: spec.replicas, or with
// autoscaling what the autoscaler last asked the Deployment for, and at least minReplicas.
func desiredReplicas(rt *chatv1alpha1.ChatRuntime, d *appsv1.Deployment) int32 {
	if rt.Spec.Autoscaling == nil || d == nil || d.Spec.Replicas == nil {
		return minReplicas(rt)
	}
	return max(minReplicas(rt), *d.Spec.Replicas)
}

// RuntimeReady decides the Ready condition of a ChatRuntime from its Deployment.
func RuntimeReady(rt *chatv1alpha1.ChatRuntime, d *appsv1.Deployment) metav1.Condition {
	c := metav1.Condition{Type: chatv1alpha1.ConditionReady, ObservedGeneration: rt.Generation}
	want := desiredReplicas(rt, d)
	switch {
	case d == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady, "the runtime Deployment does not exist yet"
	case d.Status.ObservedGeneration < d.Generation:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady, "the runtime Deployment is rolling out"
	case d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want:
		c.Status, c.Reason = metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady
		c.Message = fmt.Sprintf("%d of %d replicas are available", d.Status.AvailableReplicas, want)
		if d.Status.AvailableReplicas == 0 && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
			c.Message += "; a SQLite runtime's old pod stops before the new one opens the database, and nothing " +
				"serves until it is ready (status.lastOutage)"
		}
	default:
		c.Status, c.Reason = metav1.ConditionTrue, chatv1alpha1.ReasonReconciled
		c.Message = fmt.Sprintf("%d of %d replicas are available", d.Status.AvailableReplicas, want)
	}
	return c
}

// RuntimeOutage is a runtime's status.lastOutage once its Deployment is seen with readyReplicas ready pods, when
// the runtime had wasReady before: an outage starts when the last ready replica goes (a Deployment scaled to
// none has no outage) and ends, with its duration, when one is ready again. now is a status timestamp (whole
// seconds), so that the duration is what the timestamps say.
func RuntimeOutage(last *chatv1alpha1.RuntimeOutage, d *appsv1.Deployment, wasReady int32, now metav1.Time) *chatv1alpha1.RuntimeOutage {
	switch {
	case d == nil:
		return last
	case last != nil && last.End == nil:
		if d.Status.ReadyReplicas == 0 {
			return last
		}
		return &chatv1alpha1.RuntimeOutage{Start: last.Start, End: &now, Duration: &metav1.Duration{Duration: now.Sub(last.Start.Time)}}
	case wasReady > 0 && d.Status.ReadyReplicas == 0 && (d.Spec.Replicas == nil || *d.Spec.Replicas > 0):
		return &chatv1alpha1.RuntimeOutage{Start: now}
	default:
		return last
	}
}

// RuntimeNetworkPolicy admits anyone to the runtime's public port, and to its metrics port (/metrics and the
// usage report, which name every merchant) only pods of the operator's namespace, which reads the usage report,
// and of the namespaces spec.metrics.allowedNamespaces selects. The kubelet's probes use the public port.
func RuntimeNetworkPolicy(rt *chatv1alpha1.ChatRuntime) *networkingv1ac.NetworkPolicyApplyConfiguration {
	scrapers := []*networkingv1ac.NetworkPolicyPeerApplyConfiguration{networkingv1ac.NetworkPolicyPeer().
		WithNamespaceSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{corev1.LabelMetadataName: rt.Namespace}))}
	if sel := rt.Spec.Metrics.AllowedNamespaces; sel != nil {
		scrapers = append(scrapers, networkingv1ac.NetworkPolicyPeer().WithNamespaceSelector(labelSelector(sel)))
	}
	port := func(name string) *networkingv1ac.NetworkPolicyPortApplyConfiguration {
		return networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromString(name))
	}
	return networkingv1ac.NetworkPolicy(ServiceName(rt), TargetNamespace(rt)).
		WithLabels(RuntimeLabels(rt)).WithOwnerReferences(owners(rt)...).
		WithSpec(networkingv1ac.NetworkPolicySpec().
			WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(rt))).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(
				networkingv1ac.NetworkPolicyIngressRule().WithPorts(port("http")),
				networkingv1ac.NetworkPolicyIngressRule().WithPorts(port("metrics")).WithFrom(scrapers...)))
}

// labelSelector is the apply configuration of a label selector.
func labelSelector(sel *metav1.LabelSelector) *metav1ac.LabelSelectorApplyConfiguration {
	out := metav1ac.LabelSelector()
	if sel.MatchLabels != nil {
		out.WithMatchLabels(sel.MatchLabels)
	}
	for _, r := range sel.MatchExpressions {
		out.WithMatchExpressions(metav1ac.LabelSelectorRequirement().WithKey(r.Key).WithOperator(r.Operator).WithValues(r.Values...))
	}
	return out
}
