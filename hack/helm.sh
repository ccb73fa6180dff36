#!/usr/bin/env bash
# Prints the path of a helm 3 binary: the `helm` on PATH when it is v3.14 or newer (the chart uses
# nothing newer), else bin/tools/helm-<HELM_VERSION>, built from helm.sh/helm/v3 in the Go module
# proxy on first use (a few minutes; no GitHub release downloads here). Logs go to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/lib.sh"

HELM_VERSION="${HELM_VERSION:-v3.19.0}"
# The Kubernetes version helm assumes without a cluster (`helm template`, `helm lint`): its client-go
# v0.34 stands for 1.34, as helm's own Makefile stamps it.
HELM_K8S_MINOR="${HELM_K8S_MINOR:-34}"

# usable_on_path: true when PATH has a helm v3 of minor version 14 or newer.
usable_on_path() {
  local v minor
  command -v helm >/dev/null || return 1
  v=$(helm version --template '{{.Version}}' 2>/dev/null) || return 1
  [[ "${v}" =~ ^v3\.([0-9]+)\. ]] || return 1
  minor=${BASH_REMATCH[1]}
  [ "${minor}" -ge 14 ]
}

helm_bin="${BIN}/tools/helm-${HELM_VERSION}"

build() {
  local gobin="${BIN}/.build/helm-${HELM_VERSION}" ldflags="-s -w"
  ldflags+=" -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
  ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags+=" -X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1 -X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${HELM_K8S_MINOR}"
  done
  rm -rf "${gobin}" &&
    GOBIN="${gobin}" CGO_ENABLED=0 go install -ldflags "${ldflags}" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}" &&
    mkdir -p "${BIN}/tools" && mv "${gobin}/helm" "${helm_bin}" && rm -rf "${gobin}"
}

# build_once: under a lock, so that `make test` and hack/install.sh running together build it once.
build_once() { [ -x "${helm_bin}" ] || step "build helm ${HELM_VERSION} (go install)" build; }

if [ -z "${HELM_FROM_SOURCE:-}" ] && usable_on_path; then
  command -v helm
  exit 0
fi
[ -x "${helm_bin}" ] || with_lock "helm-${HELM_VERSION}" build_once >&2
echo "${helm_bin}"
