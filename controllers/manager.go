// Package controllers holds one reconciler per Parley kind and the manager that runs them.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
)

// Options configure the operator.
type Options struct {
	// Namespace is the operator's namespace: ChatRuntimes live there, and the tenant bundles of runtimes without
	// a targetNamespace.
	Namespace string
	// WatchNamespaces, when set, are the only namespaces whose objects the operator watches and reconciles, its
	// own included whether listed or not: a namespaced install. Runtimes' target namespaces must be among them.
	// Empty watches every namespace. Plans and Namespaces are cluster-scoped and always watched.
	WatchNamespaces []string
	// RuntimeImage is the image of runtime Deployments whose ChatRuntime names none.
	RuntimeImage string
	// MetricsAddr serves Prometheus metrics; "0" disables them.
	MetricsAddr string
	// ProbeAddr serves /healthz and /readyz; "0" disables them.
	ProbeAddr string
	// PprofAddr serves net/http/pprof, to profile the operator under load; "" or "0" disables it.
	PprofAddr string
	// LeaderElection makes only one of several operator replicas reconcile at a time.
	LeaderElection bool
	// Workers is how many Merchants, APIKeys and Webhooks are reconciled at once.
	Workers int
	// UsageInterval is how often each runtime's usage is copied into its Merchants' status, and its backups'
	// state into its own; 0 turns both off.
	UsageInterval time.Duration
	// UsageAddress, when set, is the host:port of every ChatRuntime's metrics listener, instead of its Service:
	// for an operator run outside the cluster.
	UsageAddress string
	// Registry receives the operator's own metrics; controller-runtime's registry when nil.
	Registry prometheus.Registerer
	// Rebuildable lets one process build the manager more than once, as tests that restart the operator do.
	// Controller names are otherwise checked for uniqueness per process.
	Rebuildable bool
}

// Scheme knows the Kubernetes built-in kinds and Parley's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(chatv1alpha1.AddToScheme(s))
	return s
}

// NewManager builds a manager running every Parley controller.
func NewManager(cfg *rest.Config, opts Options) (manager.Manager, error) {
	if opts.Namespace == "" {
		return nil, errors.New("the operator's namespace is required")
	}
	// Only Parley's own Secrets are cached: a cluster with tens of thousands of Secrets must not cost memory.
	secretSelector, err := labels.NewRequirement(chatv1alpha1.SecretLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	// What the operator renders for runtimes lives in their target namespaces, under its own label.
	rendered := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{render.ManagedByLabel: render.FieldOwner})}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "parley-operator.chat.parley.dev",
		LeaderElectionNamespace: opts.Namespace,
		Controller:              config.Controller{SkipNameValidation: &opts.Rebuildable},
		Cache: cache.Options{
			DefaultNamespaces: watched(opts),
			// managedFields are a large share of every object and nothing reads them, except for Deployments below.
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}:                         {Label: labels.NewSelector().Add(*secretSelector)},
				&appsv1.Deployment{}:                     keepManagedFields(rendered),
				&corev1.Service{}:                        rendered,
				&corev1.ServiceAccount{}:                 rendered,
				&rbacv1.Role{}:                           rendered,
				&rbacv1.RoleBinding{}:                    rendered,
				&policyv1.PodDisruptionBudget{}:          rendered,
				&autoscalingv2.HorizontalPodAutoscaler{}: rendered,
				&networkingv1.NetworkPolicy{}:            rendered,
			}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := setup(mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// watched are the cache's namespaces: nil for all, else opts.WatchNamespaces and the operator's own.
func watched(opts Options) map[string]cache.Config {
	if len(opts.WatchNamespaces) == 0 {
		return nil
	}
	namespaces := map[string]cache.Config{opts.Namespace: {}}
	for _, ns := range opts.WatchNamespaces {
		namespaces[ns] = cache.Config{}
	}
	return namespaces
}

// keepManagedFields caches objects with their managedFields: a Deployment's tell the replicas handoff whether the
// operator still owns spec.replicas (render.ManagesReplicas).
func keepManagedFields(c cache.ByObject) cache.ByObject {
	c.Transform = func(o any) (any, error) { return o, nil }
	return c
}

func setup(mgr manager.Manager, opts Options) error {
	if err := setupIndexes(context.Background(), mgr); err != nil {
		return fmt.Errorf("setting up field indexes: %w", err)
	}
	reg := opts.Registry
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	metrics, err := newMerchantMetrics(reg)
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	secrets := secretReader{cache: mgr.GetClient(), api: mgr.GetAPIReader()}
	// A bundle holds only usable keys and webhooks, so a Secret missing from the cache leaves its key or webhook
	// out just as a missing one does, and brings the Merchant back when it arrives: no request to explain it.
	cachedSecrets := secretReader{cache: mgr.GetClient()}
	workers := max(opts.Workers, 1)
	c := mgr.GetClient()

	if err := (&PlanReconciler{Client: c, Recorder: mgr.GetEventRecorder("parley-plan")}).
		SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the Plan controller: %w", err)
	}
	if err := (&ChatRuntimeReconciler{Client: c, Recorder: mgr.GetEventRecorder("parley-chatruntime"),
		Namespace: opts.Namespace, Image: opts.RuntimeImage, Now: time.Now}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ChatRuntime controller: %w", err)
	}
	if err := (&MerchantReconciler{Client: c, APIReader: mgr.GetAPIReader(), Secrets: cachedSecrets, Recorder: mgr.GetEventRecorder("parley-merchant"),
		Metrics: metrics, Now: time.Now, Namespace: opts.Namespace}).SetupWithManager(mgr, workers); err != nil {
		return fmt.Errorf("setting up the Merchant controller: %w", err)
	}
	smallKind := func(recorder string) smallKindReconciler {
		return smallKindReconciler{Client: c, APIReader: mgr.GetAPIReader(), Secrets: secrets, Recorder: mgr.GetEventRecorder(recorder),
			Now: time.Now, Namespace: opts.Namespace}
	}
	if err := (&APIKeyReconciler{smallKind("parley-apikey")}).SetupWithManager(mgr, workers); err != nil {
		return fmt.Errorf("setting up the APIKey controller: %w", err)
	}
	if err := (&WebhookReconciler{smallKind("parley-webhook")}).SetupWithManager(mgr, workers); err != nil {
		return fmt.Errorf("setting up the Webhook controller: %w", err)
	}
	reports := NewSourceReports()
	if err := (&KnowledgeSourceReconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("parley-knowledgesource"),
		Reports: reports, Now: time.Now}).SetupWithManager(mgr, workers); err != nil {
		return fmt.Errorf("setting up the KnowledgeSource controller: %w", err)
	}
	if opts.UsageInterval > 0 {
		address := render.MetricsAddress
		if opts.UsageAddress != "" {
			address = func(*chatv1alpha1.ChatRuntime) string { return opts.UsageAddress }
		}
		poller := func(name string) runtimePoller {
			return runtimePoller{Client: c, Namespace: opts.Namespace, Interval: opts.UsageInterval, Address: address,
				HTTP: &http.Client{}, Log: mgr.GetLogger().WithName(name)}
		}
		if err := mgr.Add(&UsagePoller{runtimePoller: poller("usage"), Sources: reports}); err != nil {
			return fmt.Errorf("setting up the usage poller: %w", err)
		}
		if err := mgr.Add(&BackupPoller{poller("backup")}); err != nil {
			return fmt.Errorf("setting up the backup poller: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("ping", healthz.Ping)
}
