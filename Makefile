# vmbench: see README.md. Every tool is built from the Go module proxy into bin/, so nothing here needs
# more than the proxy and Debian's archive.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
# Where make test-html saves the HTML report's screenshot.
SCREENSHOT ?= $(BIN)/html-report.png
# Tools live in the cache that hack/lib.sh shares between clones of this repository.
CACHE ?= $(or $(VMBENCH_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vmbench)
TOOLS := $(CACHE)/tools
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.5.0
CONTROLLER_GEN := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)
CRD_REF_DOCS_VERSION ?= v0.3.0
CRD_REF_DOCS := $(TOOLS)/crd-ref-docs-$(CRD_REF_DOCS_VERSION)
export GOFLAGS ?= -buildvcs=false

.PHONY: all
all: build

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC manifests from the Go markers.
	$(CONTROLLER_GEN) rbac:roleName=vmbench-manager crd:allowDangerousTypes=true paths="{./api/...,./controllers/...}" \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	cp config/crd/bases/*.yaml charts/vmbench/crds/
	cp config/rbac/role.yaml charts/vmbench/files/manager-role.yaml

.PHONY: helm
helm: ## Build helm from the Go module proxy unless a recent one is on PATH (hack/helm.sh).
	hack/helm.sh

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the DeepCopy methods.
	$(CONTROLLER_GEN) object paths="./api/..."

.PHONY: dashboards
dashboards: ## Generate the Grafana dashboards (internal/dashboards) into charts/vmbench/dashboards.
	go run ./cmd/dashboards -out charts/vmbench/dashboards

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet, also of the tests behind build tags (the kind e2e, chaos, scale, Chromium).
	go vet ./...
	go vet -tags 'e2e chaos scale chromium' ./...

.PHONY: lint-tools
lint-tools: $(GOLANGCI_LINT) $(CRD_REF_DOCS) ## Build golangci-lint and crd-ref-docs (make lint's and make verify's tools).

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (see .golangci.yml).
	$(GOLANGCI_LINT) run ./...

.PHONY: tidy
tidy: ## go mod tidy.
	go mod tidy

.PHONY: api-docs
api-docs: $(CRD_REF_DOCS) ## Write the API reference docs/api.md from the Go types in api/v1alpha1.
	$(CRD_REF_DOCS) --source-path=./api/v1alpha1 --config=hack/crd-ref-docs.yaml --renderer=markdown \
		--output-path=docs/api.md --log-level=warn

.PHONY: verify
verify: manifests generate dashboards api-docs fmt tidy ## Regenerate everything, then fail if that changed a tracked file.
	@git diff --exit-code || { echo "generated files or go.mod are stale: run 'make manifests generate api-docs fmt tidy' and commit"; exit 1; }

.PHONY: envtest-assets
envtest-assets: ## Download or build kube-apiserver and etcd for envtest (cached under bin/k8s).
	hack/envtest-assets.sh

.PHONY: envtest-crds
envtest-crds: $(CONTROLLER_GEN) ## Put the MPIJob, VirtualMachineInstance and VirtualMachineInstanceMigration CRDs for envtest into bin/crds.
	CONTROLLER_GEN=$(CONTROLLER_GEN) hack/envtest-crds.sh

# make test builds the kind e2e's images (hack/prebuild.sh) in the background, at nice 19, while the
# unit and envtest tests run, so that the cluster and install scripts find them built; the lint tools
# (make verify's and make lint's) are built the same way while the e2e runs.
.PHONY: test
test: ## Every test: unit, parser, chart and envtest tests and the HTML report in Chromium (the e2e's images built beside them), then the kind e2e (times in docs/performance.md).
	hack/prebuild.sh --background
	$(MAKE) --no-print-directory test-unit test-html || { hack/prebuild.sh --stop; exit 1; }
	hack/prebuild.sh --wait-e2e
	$(MAKE) --no-print-directory test-e2e || { hack/prebuild.sh --stop; exit 1; }
	hack/prebuild.sh --wait

.PHONY: test-unit
test-unit: manifests generate vet envtest-crds ## Unit, parser, chart and envtest integration tests: no cluster, no docker.
	hack/test-tools.sh
	hack/seaweedfs.sh >/dev/null
	VMBENCH_REQUIRE_TOOLS=1 VMBENCH_SEAWEEDFS="$$(hack/seaweedfs.sh)" KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go test ./... -coverprofile cover.out

# SCALE_SIZES and SCALE_QUEUES pick the points of bench-scale, e.g. SCALE_SIZES=500 SCALE_QUEUES=off.
SCALE_SIZES ?= 5 20 50
SCALE_QUEUES ?= 1 off

.PHONY: bench-scale
bench-scale: manifests envtest-crds ## The scale benchmark (test/scale, not part of test): 5, 20 and 50 suites on envtest, with the run queue and without, each in a process of its own; figures in docs/performance.md.
	for n in $(SCALE_SIZES); do for q in $(SCALE_QUEUES); do \
		KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go test -tags scale ./test/scale/ -run '^$$' \
			-bench "BenchmarkSuites/^suites=$$n$$/^queue=$$q$$" -benchtime 1x -timeout 60m || exit 1; done; done

.PHONY: test-html
test-html: ## The quick suite's HTML report in headless Chromium (installed from Debian when missing): no external load, no console error; screenshot in bin/ (SCREENSHOT=docs/report/html-report.png refreshes the one docs/reports.md shows).
	hack/chromium.sh
	mkdir -p bin && go test -tags chromium ./internal/report/ -run '^TestHTMLInChromium$$' -count=1 -v -args -screenshot $(abspath $(SCREENSHOT))

.PHONY: fuzz
fuzz: ## Run every parser and frame fuzz target for FUZZTIME each (default 20s).
	for target in $$(go test ./internal/results/ -list 'Fuzz.*' | grep ^Fuzz); do \
		go test ./internal/results/ -run XXX -fuzz "^$$target$$" -fuzztime $${FUZZTIME:-20s} -fuzzminimizetime 2s || exit 1; done
	go test ./internal/frame/ -run XXX -fuzz '^FuzzScan$$' -fuzztime $${FUZZTIME:-20s}

##@ Cluster (kind, offline-capable)

.PHONY: cluster-up
cluster-up: ## Start the kind cluster and the OCI registry beside it (built from the Go module proxy and Debian packages when offline).
	hack/kind/cluster-up.sh

.PHONY: cluster-down
cluster-down: ## Remove the kind cluster; the registry beside it and the images stay (hack/kind/cluster-down.sh --purge removes them).
	hack/kind/cluster-down.sh

.PHONY: images
images: ## Build the manager, runner and MPI Operator images.
	hack/images/vmbench.sh
	hack/images/mpi-operator.sh

.PHONY: install
install: ## Push vmbench's images to the registry beside the kind cluster, load the MPI Operator's, KubeVirt's and Prometheus' images, install them all.
	hack/install.sh

.PHONY: demo
demo: ## Cluster up, install, run the sample suite, print the comparison.
	hack/demo.sh

# The e2e package is built with the chaos test in it (tags e2e and chaos) both times, so that the
# chaos run after the e2e reuses the compiled package. The chaos test kills the manager's pod, so it
# runs apart, after every other e2e test, on the same cluster.
E2E_TEST = KUBECONFIG=$(BIN)/kind/vmbench.kubeconfig go test -tags 'e2e chaos' ./test/e2e/ -count=1 -v
CHAOS_TEST = TestManagerKilledAtRandomLosesNothingAndRunsNothingTwice

.PHONY: test-e2e
test-e2e: ## dockerd and the kind cluster up, MPI Operator, KubeVirt and vmbench installed (archiving to an in-cluster SeaweedFS), then the kind end-to-end suite (test/e2e, a VM live-migrated three times among it), then the chaos test on the same cluster.
	hack/kind/cluster-up.sh
	VMBENCH_E2E_ARCHIVE=1 hack/install.sh
	$(E2E_TEST) -timeout 100m -skip '^$(CHAOS_TEST)$$'
	$(E2E_TEST) -timeout 15m -run '^$(CHAOS_TEST)$$'

.PHONY: test-chaos
test-chaos: ## The chaos test alone (part of test-e2e): the manager's pod deleted every 8-20 s during a container suite of four runs on the kind cluster; no sample lost or counted twice.
	hack/kind/cluster-up.sh
	hack/install.sh
	$(E2E_TEST) -timeout 15m -run '^$(CHAOS_TEST)$$'

##@ Build

# VERSION is what `vmbench version` prints: the checkout's tag or commit, unless given.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build
build: ## Build the manager, runner and vmbench CLI into bin/.
	CGO_ENABLED=0 go build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

# make push: where and under which tag the cluster's images go (TAG empty: derived from their content).
REGISTRY ?=
TAG ?=
# The manager image alone, for kubebuilder's docker-build and docker-push.
IMG ?= vmbench/manager:dev

.PHONY: push
push: ## Build the manager, runner and VM disk images and push them as REGISTRY/vmbench-{manager,runner,vm-disk}:TAG (e.g. REGISTRY=registry.example.com/perf TAG=v0.1.0); prints each digest.
	@[ -n "$(REGISTRY)" ] || { echo "make push: REGISTRY is not set: give the registry and path to push to, e.g. make push REGISTRY=registry.example.com/perf TAG=v0.1.0 (docker login to it first)" >&2; exit 2; }
	hack/images/push.sh "$(REGISTRY)" "$(TAG)"

.PHONY: docker-build
docker-build: ## Build the manager image alone and tag it IMG (default vmbench/manager:dev).
	hack/images/vmbench.sh manager
	[ "$(IMG)" = vmbench/manager:dev ] || docker tag vmbench/manager:dev "$(IMG)"

.PHONY: docker-push
docker-push: ## Push the manager image IMG (after docker-build); make push pushes every image a cluster needs.
	docker push "$(IMG)"

.PHONY: kubectl-plugin
kubectl-plugin: ## Build the CLI as bin/kubectl-vmbench: put it on PATH to run `kubectl vmbench preflight`, `kubectl vmbench report ...`.
	CGO_ENABLED=0 go build -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-vmbench ./cmd/vmbench

$(CONTROLLER_GEN):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS)/controller-gen $@

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/golangci-lint $@

$(CRD_REF_DOCS):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install github.com/elastic/crd-ref-docs@$(CRD_REF_DOCS_VERSION)
	mv $(TOOLS)/crd-ref-docs $@

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
