#!/usr/bin/env bash
# Builds the Kubernetes server binaries that a kind node image needs (kubeadm, kubelet, kubectl and the
# four control-plane components) from the Go module proxy, into bin/k8s-server/v<version>/. There is
# no dl.k8s.io here, so the sources come from a wrapper module around k8s.io/kubernetes (see lib.sh).
# Cached: a second run with the same version and script is instant.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

out="${BIN}/k8s-server/v${K8S_VERSION}"
cmds=(kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)

build() {
  local work="${BIN}/.build/k8s-server-${K8S_VERSION}" pkgs=() c
  for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${c}"); done
  k8s_wrapper_module "${work}" || return
  mkdir -p "${out}"
  (cd "${work}" && go get "${pkgs[@]/%/@v${K8S_VERSION}}" &&
    CGO_ENABLED=0 go build -ldflags "$(k8s_ldflags)" -o "${out}/" "${pkgs[@]}") || return
  "${out}/kubeadm" version -o short
}

incomplete=0
for c in "${cmds[@]}"; do [ -x "${out}/${c}" ] || incomplete=1; done
[ "${incomplete}" = 0 ] || rm -f "${BIN}/stamps/k8s-server-v${K8S_VERSION}"
cached_step "k8s-server-v${K8S_VERSION}" \
  "$(inputs_hash "$(go env GOVERSION)" "${cmds[*]}" "$(declare -f build k8s_wrapper_module k8s_ldflags)")" build
