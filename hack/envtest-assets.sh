#!/usr/bin/env bash
# Puts kube-apiserver, etcd and kubectl for envtest into bin/k8s/<version>-linux-amd64 and prints that
# directory (for KUBEBUILDER_ASSETS). Online, setup-envtest downloads the released binaries; offline,
# they are built from the Go module proxy. Either way the result is cached: a second call is instant.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

dir="${BIN}/k8s/${K8S_VERSION}-linux-amd64"
if [ -x "${dir}/kube-apiserver" ] && [ -x "${dir}/etcd" ] && [ -x "${dir}/kubectl" ]; then
  echo "${dir}"
  exit 0
fi
mkdir -p "${dir}"

download() {
  [ "${VMBENCH_OFFLINE:-}" = 1 ] && return 1
  local out
  out=$(timeout 300 go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest \
    use "${K8S_VERSION}" --bin-dir "${BIN}/setup-envtest" -p path 2>/dev/null) || return 1
  [ -x "${out}/kube-apiserver" ] || return 1
  cp "${out}"/{kube-apiserver,etcd,kubectl} "${dir}/"
}

build_kube() {
  local work="${BIN}/.build/k8s-${K8S_VERSION}"
  k8s_wrapper_module "${work}"
  (cd "${work}" && go get "k8s.io/kubernetes/cmd/kube-apiserver@v${K8S_VERSION}" "k8s.io/kubernetes/cmd/kubectl@v${K8S_VERSION}" &&
    CGO_ENABLED=0 go build -ldflags "$(k8s_ldflags)" -o "${dir}/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl)
}

# etcd's own go.mod has replace directives, so `go install pkg@version` refuses it: build it from a
# wrapper module instead.
build_etcd() {
  local work="${BIN}/.build/etcd-${ETCD_VERSION}"
  mkdir -p "${work}"
  [ -f "${work}/go.mod" ] || (cd "${work}" && go mod init vmbench.local/etcd-build >/dev/null 2>&1)
  (cd "${work}" && go get "go.etcd.io/etcd/server/v3@v${ETCD_VERSION}" &&
    CGO_ENABLED=0 go build -ldflags "-s -w" -o "${dir}/etcd" go.etcd.io/etcd/server/v3)
}

if step "envtest binaries: download v${K8S_VERSION}" download; then
  :
else
  log "download unavailable, building kube-apiserver v${K8S_VERSION} and etcd v${ETCD_VERSION} from source"
  step "build etcd v${ETCD_VERSION}" build_etcd
  step "build kube-apiserver + kubectl v${K8S_VERSION}" build_kube
fi
echo "${dir}"
