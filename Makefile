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
vet: ## Run go vet on both test tiers.
	go vet -tags $(TEST_TAGS) ./...

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
verify-lexicon: ## Fail when a word table differs from its checksum or from its generator's output.
	hack/lexicon/lexicon.sh -verify

# Tests come in two tiers, chosen by a build tag, never by a list of names. A test file that starts a server
# (envtest's kube-apiserver and etcd, PostgreSQL, Redis, headless Chromium) or builds and runs the binaries begins
# with `//go:build integration`, and so do the helpers that start those servers (internal/testutil/pgtest,
# redistest, headless, runtimeproc, embedserver): a fast test that reaches for one does not compile. Shared fixtures and pure
# helpers stay untagged (controllers/fixtures_test.go). Every untagged test is in the fast tier, `make test-unit`,
# run with -race; `make test` adds the tag and runs both tiers. vet and lint build with the tag, so they see both.
TEST_TAGS = integration

.PHONY: test
test: manifests generate vet ## Run every test, the integration tier included (envtest, PostgreSQL, Redis, Chromium).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test -tags $(TEST_TAGS) ./... -count=1 -timeout 20m

.PHONY: test-unit
test-unit: ## Run the fast tier with -race: every test that needs no API server, database server or browser.
	go test -race -count=1 -timeout 10m ./...

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
	go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench BenchmarkChatHTTP -benchtime 1x -count=1 -timeout 10m -v

.PHONY: bench-many
bench-many: ## One runtime, 10,000 merchants x 100 items: bundle load time, uniform and Zipf throughput and p99, evicted p99, peak RSS.
	go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench BenchmarkManyMerchants -benchtime 1x -count=1 -timeout 30m -v

.PHONY: bench-many-vectors
bench-many-vectors: ## make bench-many answering with a (fake) model and searching by meaning: 512-dimensional vectors of every item; also counts the provider's calls per question.
	PARLEY_BENCH_VECTORS=512 go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench BenchmarkManyMerchants -benchtime 1x -count=1 -timeout 60m -v

.PHONY: bench-crawl
bench-crawl: ## Sync a declared source of 1,000 local pages beside another merchant's chat at 100 req/s; report crawl time, peak RSS, chat p99 quiet and during the crawl.
	go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench BenchmarkCrawlBesideChat -benchtime 1x -count=1 -timeout 10m -v

.PHONY: bench-profile
bench-profile: wrk ## make bench with CPU and allocation profiles of the runtime during the chat run, in $(PROFILE_DIR) (PROFILE_BENCH=BenchmarkChatHTTPScaleOut: the scale-out set-up's).
	PARLEY_BENCH_PROFILE="$(PROFILE_DIR)" go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench '^$(PROFILE_BENCH)$$' -benchtime 1x -count=1 -timeout 10m -v
	go tool pprof -top -nodecount=40 "$(PROFILE_DIR)/cpu.pprof"
	go tool pprof -sample_index=alloc_space -top -nodecount=25 "$(PROFILE_DIR)/allocs.pprof"

.PHONY: bench-webhooks
bench-webhooks: ## Chat at 200 new conversations a second on `parley dev` with a webhook; report event-to-delivery p50 and p99.
	go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench BenchmarkWebhookLag -benchtime 1x -count=1 -timeout 5m -v

.PHONY: bench-stream
bench-stream: ## Stream answers from a fake model provider; report time to the first piece and the runtime's added latency.
	go test ./runtime/server -run '^$$' -bench BenchmarkChatStream -benchtime 50x -count=1 -timeout 5m

.PHONY: bench-live
bench-live: ## Hold idle live streams (memory per stream) and fan a team message out to 500 streams (p50, p99).
	go test ./runtime/server -run '^$$' -bench 'BenchmarkIdleStreams|BenchmarkStreamFanout' -benchtime 20x -count=1 -timeout 5m

.PHONY: quality
quality: ## Print the offline assistant's top-1, declines, ranking, recall@5 and wrong answers on the demo shop and each evaluation base (tuning and held-out parts, as written, with listed questions and with the tuning misses fixed from the review queue), and every tuning miss.
	go test ./runtime/assistant -run '^$$' -bench 'Quality|Fixture' -benchtime 1x -count=1 -v

.PHONY: ablation
ablation: ## Print what each of the offline assistant's lexical resources and heuristics earns on the held-out questions of every base (docs/assistant.md).
	go test ./runtime/assistant -run '^$$' -bench Ablation -benchtime 1x -count=1 -v
.PHONY: quality-embeddings
quality-embeddings: ## Print each evaluation base's top-1, recall@5 and declines with words alone and fused with a real sentence encoder's embeddings (hack/embedserver; needs Node).
	go test -tags integration ./runtime/assistant -run '^$$' -bench QualityEmbeddings -benchtime 1x -count=1 -v -timeout 20m

.PHONY: wrk
wrk: ## Install wrk from Debian's packages if missing.
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends wrk; }

# MERCHANTS is how many merchants `make bench-operator` creates: 10000 (the goal: about 7 writes a merchant, each
# Ready within 10 s of the creates' end, under 300 MiB with PARLEY_MEMORY_LIMIT=314572800) or 1000 (60 seconds and
# 150 MiB).
MERCHANTS ?= 10000

.PHONY: bench-operator
bench-operator: ## Create MERCHANTS (10000) merchants with a key and a webhook in envtest; report time to Ready and the operator's peak memory.
	PARLEY_BENCH_MERCHANTS=$(MERCHANTS) KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test -tags $(TEST_TAGS) ./test/bench -run '^$$' -bench BenchmarkOperatorScale -benchtime 1x -count=1 -timeout 30m -v

##@ Trying it out

.PHONY: dev
dev: ## Run the chat runtime on localhost:8080 with a demo merchant, demo knowledge and a local OIDC issuer.
	go run ./cmd/parley dev

.PHONY: local-cluster
local-cluster: manifests ## Run a local kube-apiserver and etcd with the CRDs; writes .parley/kubeconfig.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go run ./hack/local-cluster
