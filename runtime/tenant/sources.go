package tenant

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/parley-dev/parley/internal/contract"
)

// WatchSecrets keeps the registry in step with the tenant bundle Secrets of one runtime in its namespace, until
// ctx ends: bundles served are set, retired ones recorded as retirements. It returns once the initial list is
// loaded.
func WatchSecrets(ctx context.Context, cfg *rest.Config, namespace, runtimeName string, r *Registry) error {
	client, err := secretsClient(cfg)
	if err != nil {
		return err
	}
	lw := cache.NewFilteredListWatchFromClient(client, "secrets", namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = contract.BundleSelector(runtimeName) })
	informer := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{})
	set := func(obj any) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		if s.Labels[contract.LabelTenant] != contract.TenantRetired {
			_ = r.Set(s.Name, s.Data[DataKey]) // rejections are logged and counted by the registry
			return
		}
		ret, err := RetirementOf(s.Labels, s.Annotations)
		if err != nil {
			// Never served, never erased: a retirement without a time cannot start the retention.
			r.log.Error("retired tenant bundle without a valid retirement", "source", s.Name, "error", err)
			r.Delete(s.Name)
			return
		}
		r.Retire(s.Name, ret)
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if s, ok := obj.(*corev1.Secret); ok {
				r.Delete(s.Name)
			}
		},
	}); err != nil {
		return fmt.Errorf("watching tenant bundles: %w", err)
	}
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return errors.New("tenant bundles did not sync before shutdown")
	}
	r.MarkSynced()
	return nil
}

// secretsClient is a REST client of the core API's version 1 that knows only that version's kinds. The runtime
// watches Secrets and nothing else; client-go's clientset would link in and register every API group, tens of
// MiB of executable that a runtime would keep resident for nothing.
func secretsClient(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering the core API's kinds: %w", err)
	}
	c := rest.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating a Kubernetes client: %w", err)
	}
	return client, nil
}

// WatchDir keeps the registry in step with the *.json bundle files of a directory, until ctx ends. It returns
// once the directory has been read. Files are named after anything; each is one source.
func WatchDir(ctx context.Context, dir string, r *Registry) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		if isBundleFile(e.Name()) {
			loadFile(r, filepath.Join(dir, e.Name()))
		}
	}
	r.MarkSynced()
	go func() {
		defer func() { _ = w.Close() }()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !isBundleFile(ev.Name) {
					continue
				}
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					r.Delete(ev.Name)
				} else {
					loadFile(r, ev.Name)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				r.log.Error("watching the tenant directory", "dir", dir, "error", err)
			}
		}
	}()
	return nil
}

// RetirementOf reads the retirement a retired bundle Secret's labels and annotations record.
func RetirementOf(labels, annotations map[string]string) (Retirement, error) {
	id := labels[contract.LabelMerchantID]
	if len(id) > 63 || !dnsLabel.MatchString(id) {
		return Retirement{}, fmt.Errorf("label %s: merchant ID %q is not a DNS label", contract.LabelMerchantID, id)
	}
	at, err := time.Parse(time.RFC3339, annotations[contract.AnnotationRetiredAt])
	if err != nil {
		return Retirement{}, fmt.Errorf("annotation %s: %w", contract.AnnotationRetiredAt, err)
	}
	return Retirement{MerchantID: id, At: at}, nil
}

func isBundleFile(name string) bool {
	base := filepath.Base(name)
	return strings.HasSuffix(base, ".json") && !strings.HasPrefix(base, ".")
}

func loadFile(r *Registry, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			r.Delete(path)
			return
		}
		r.log.Error("reading tenant bundle", "path", path, "error", err)
		return
	}
	_ = r.Set(path, data) // rejections are logged and counted by the registry
}
