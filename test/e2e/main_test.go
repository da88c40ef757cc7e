//go:build integration

// Package e2e runs the operator and the chat runtime as separate processes against a real API server (envtest:
// kube-apiserver and etcd, no kubelet), wired as they are in a cluster: the operator writes tenant bundles, the
// runtime watches them. Run with `make test`.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/testutil/fakeembed"
	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/internal/testutil/fakeopenai"
	"github.com/parley-dev/parley/internal/testutil/operatortest"
)

const operatorNS = "parley-system"

// cluster is what every test shares: the API server, a client, and the running operator and runtime.
var cluster struct {
	client client.Client
	// runtimeURL is the base URL of the `parley runtime` process.
	runtimeURL string
	// sqlitePath is the runtime's database, which tests read to see what the runtime keeps.
	sqlitePath string
	// small and large are the model providers the ChatRuntime declares for plans (spec.assistant.providers).
	small, large *fakellm.Provider
	// smallEmbed and largeEmbed are their embedding models' servers; plainEmbed is the embeddings endpoint of a
	// third provider, plain, which declares no embedding model and so must be sent nothing.
	smallEmbed, largeEmbed, plainEmbed *fakeembed.Provider
}

// The runtime's providers for plans: small with two models and no key, large with one model and the
// platform's key from a Secret, each with an embedding model; plain with one model and none.
const (
	smallAnswer, largeAnswer = "Answered by the small model.", "Answered by the large model."
	plainAnswer              = "Answered by the plain model."
	largePlatformKey         = "sk-platform-large-0123456789"
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return 1, errors.New("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmp, err := os.MkdirTemp("", "parley-e2e-")
	if err != nil {
		return 1, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	env := operatortest.Environment()
	cfg, err := env.Start()
	if err != nil {
		return 1, fmt.Errorf("starting envtest: %w", err)
	}
	defer func() { _ = env.Stop() }()
	if cluster.client, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()}); err != nil {
		return 1, err
	}
	kubeconfig, err := operatortest.WriteKubeconfig(env, tmp)
	if err != nil {
		return 1, err
	}
	bin, operatorBin := filepath.Join(tmp, "parley"), filepath.Join(tmp, "parley-operator")
	for out, pkg := range map[string]string{bin: "../../cmd/parley", operatorBin: "../../cmd/parley-operator"} {
		if out, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			return 1, fmt.Errorf("building %s: %w\n%s", pkg, err, out)
		}
	}

	if err := cluster.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}); err != nil {
		return 1, err
	}
	small, large, plain := fakeopenai.Start(smallAnswer), fakeopenai.Start(largeAnswer), fakeopenai.Start(plainAnswer)
	defer small.Close()
	defer large.Close()
	defer plain.Close()
	cluster.small, cluster.large = small.Chat, large.Chat
	cluster.smallEmbed, cluster.largeEmbed, cluster.plainEmbed = small.Embed, large.Embed, plain.Embed
	if err := cluster.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "large-llm", Namespace: operatorNS},
		Data: map[string][]byte{chatv1alpha1.DefaultOpenAIAPIKeyKey: []byte(largePlatformKey)}}); err != nil {
		return 1, err
	}
	if err := cluster.client.Create(ctx, &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: operatorNS},
		// The tests' webhook receivers are on loopback; deleted merchants' data is erased at once. Merchants
		// whose plans name no provider are answered offline (retrieval), the others by the fake providers, whose
		// embedding models the runtime starts with too.
		Spec: chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com",
			Webhooks:                 chatv1alpha1.ChatRuntimeWebhooks{AllowPrivateAddresses: true},
			DeletedMerchantRetention: &metav1.Duration{},
			Assistant: chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantRetrieval, Providers: []chatv1alpha1.ModelProviderSpec{
				{Name: "small", BaseURL: small.URL(), Models: []chatv1alpha1.ProviderModelSpec{{Name: "small-a"}, {Name: "small-b"}},
					Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "small-embed"}},
				{Name: "large", BaseURL: large.URL(), APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "large-llm"},
					Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "large-embed"},
					Models: []chatv1alpha1.ProviderModelSpec{{Name: "large-a", ModelSettings: chatv1alpha1.ModelSettings{
						FirstTokenTimeout: &metav1.Duration{Duration: 20 * time.Second}}}}},
				{Name: "plain", BaseURL: plain.URL(), Models: []chatv1alpha1.ProviderModelSpec{{Name: "plain-a"}}},
			}}}}); err != nil {
		return 1, err
	}

	// The operator reads the runtime's usage from its metrics listener, here on a free loopback port rather than
	// the Service a pod has, and often, so that the test sees it soon.
	metricsAddr, err := freeAddress()
	if err != nil {
		return 1, err
	}
	logs := &processLogs{}
	env1 := append(os.Environ(), "KUBECONFIG="+kubeconfig)
	operator := exec.CommandContext(ctx, operatorBin, "--namespace="+operatorNS,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--usage-interval=200ms", "--usage-address="+metricsAddr)
	operator.Env = env1
	operator.Stderr = logs.writer("operator")
	if err := operator.Start(); err != nil {
		return 1, err
	}
	defer func() { _ = operator.Process.Kill(); _ = operator.Wait() }()

	// The runtime runs with the arguments and environment the operator rendered into its Deployment, adapted only
	// where a process on this machine must differ from a pod.
	cluster.sqlitePath = filepath.Join(tmp, "parley.db")
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: operatorNS}}
	args, runtimeEnv, err := operatortest.RenderedRuntime(ctx, cluster.client, rt, map[string]string{
		contract.FlagListen:        "127.0.0.1:0",
		contract.FlagSQLitePath:    cluster.sqlitePath,
		contract.FlagMetricsListen: metricsAddr,
	})
	if err != nil {
		return 1, fmt.Errorf("%w\n%s", err, logs)
	}
	runtime := exec.CommandContext(ctx, bin, args...)
	runtime.Env = slices.Concat(env1, runtimeEnv)
	stderr, err := runtime.StderrPipe()
	if err != nil {
		return 1, err
	}
	if err := runtime.Start(); err != nil {
		return 1, err
	}
	defer func() { _ = runtime.Process.Kill(); _ = runtime.Wait() }()
	addr, err := listenAddress(stderr, logs.writer("runtime"))
	if err != nil {
		return 1, fmt.Errorf("starting the runtime: %w\n%s", err, logs)
	}
	cluster.runtimeURL = "http://" + addr

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- operator and runtime logs ---\n%s", logs)
	}
	return code, nil
}

// listenAddress reads the runtime's JSON logs until it says where it serves, copying every line to rest.
func listenAddress(stderr io.Reader, rest io.Writer) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			_, _ = fmt.Fprintln(rest, sc.Text())
			var entry struct {
				Msg    string `json:"msg"`
				Listen string `json:"listen"`
			}
			if json.Unmarshal(sc.Bytes(), &entry) == nil && entry.Msg == "serving the chat runtime" {
				found <- entry.Listen
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			return "", errors.New("the runtime exited")
		}
		return addr, nil
	case <-time.After(30 * time.Second):
		return "", errors.New("the runtime did not start serving within 30s")
	}
}

// processLogs keeps the processes' logs to print when a test fails.
type processLogs struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *processLogs) writer(name string) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for line := range strings.Lines(string(p)) {
			l.buf.WriteString(name + ": " + line)
		}
		return len(p), nil
	})
}

func (l *processLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// freeAddress returns a loopback address with a port free at the time of asking.
func freeAddress() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}
