#!/usr/bin/env bash
# Builds the binaries of the cluster add-ons that the kind node image and the cluster need, each from
# its own wrapper Go module so that nothing but the Go module proxy is used: etcd, CoreDNS,
# local-path-provisioner and flannel's CNI plugin with CGO_ENABLED=0, flanneld with cgo (see below);
# plus pause, compiled with gcc -static from the kubernetes module's build/pause.
# Output: bin/addons/<name>-<version>/. Each add-on is cached on its own: changing one version
# rebuilds only that one.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/env.sh"

# go_addon NAME VERSION MODULE PKG [LDFLAGS] [cgo]: builds PKG of MODULE@VERSION into
# bin/addons/NAME-VERSION/NAME, from a wrapper module whose go.mod requires only that module.
# With `cgo`, the binary is still fully static: Go's own DNS and user lookups, glibc linked in.
go_addon() {
  local name=$1 version=$2 module=$3 pkg=$4 ldflags="-s -w ${5:-}" cgo=0 tags=""
  [ "${6:-}" = cgo ] && cgo=1 tags="netgo,osusergo" ldflags+=" -extldflags -static"
  local work="${BIN}/.build/${name}-${version}" out="${BIN}/addons/${name}-${version}"
  mkdir -p "${work}" "${out}" || return
  [ -f "${work}/go.mod" ] || (cd "${work}" && go mod init "vmbench.local/${name}-build" 2>/dev/null) || return
  (cd "${work}" && go get "${module}@${version}" && go get "${pkg}@${version}" &&
    CGO_ENABLED="${cgo}" go build -tags "${tags}" -ldflags "${ldflags}" -o "${out}/${name}" "${pkg}")
}

# etcd was already built for envtest at the same version: reuse it rather than build it twice.
etcd() {
  local envtest="${BIN}/k8s/${K8S_VERSION}-linux-amd64/etcd" out="${BIN}/addons/etcd-v${ETCD_VERSION}"
  if [ -x "${envtest}" ] && [[ "$("${envtest}" --version)" == *"etcd Version: ${ETCD_VERSION}"$'\n'* ]]; then
    mkdir -p "${out}" && cp "${envtest}" "${out}/etcd"
  else
    go_addon etcd "v${ETCD_VERSION}" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3
  fi
}

pause() {
  local src out="${BIN}/addons/pause-${PAUSE_VERSION}"
  src="$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | jq -r .Dir)/build/pause/linux/pause.c"
  apt_ensure gcc libc6-dev || return
  mkdir -p "${out}" && gcc -Os -Wall -Werror -static -DVERSION="v${PAUSE_VERSION}" -o "${out}/pause" "${src}"
}

addon() {
  local name=$1 version=$2
  shift 2
  [ -x "${BIN}/addons/${name}-${version}/${name}" ] || rm -f "${BIN}/stamps/addon-${name}-${version}"
  cached_step "addon-${name}-${version}" \
    "$(inputs_hash "$(go env GOVERSION)" "$*" "$(declare -f go_addon "$1")")" "$@"
}

addon etcd "v${ETCD_VERSION}" etcd
addon coredns "${COREDNS_VERSION}" go_addon coredns "${COREDNS_VERSION}" github.com/coredns/coredns github.com/coredns/coredns
addon local-path-provisioner "${LOCAL_PATH_VERSION}" go_addon local-path-provisioner "${LOCAL_PATH_VERSION}" \
  github.com/rancher/local-path-provisioner github.com/rancher/local-path-provisioner "-X main.VERSION=${LOCAL_PATH_VERSION}"
# flannel's UDP backend is cgo on amd64, so flanneld is built as upstream builds it there: cgo, static.
addon flanneld "${FLANNEL_VERSION}" go_addon flanneld "${FLANNEL_VERSION}" github.com/flannel-io/flannel \
  github.com/flannel-io/flannel "-X github.com/flannel-io/flannel/pkg/version.Version=${FLANNEL_VERSION}" cgo
# github.com/flannel-io/cni-plugin is refused by the proxy (403); the same plugin lived in
# containernetworking/plugins until v0.9.1, which the proxy serves.
addon flannel "${FLANNEL_CNI_VERSION}" go_addon flannel "${FLANNEL_CNI_VERSION}" github.com/containernetworking/plugins \
  github.com/containernetworking/plugins/plugins/meta/flannel
addon pause "${PAUSE_VERSION}" pause
