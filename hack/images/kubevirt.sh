#!/usr/bin/env bash
# Makes the KubeVirt images that hack/kind/kubevirt.sh installs, all named vmbench/<upstream name>:<version>:
#   vmbench/virt-operator, virt-api, virt-controller    (Debian bookworm, USER 1001)
#   vmbench/virt-handler, virt-launcher                 (Debian trixie: libvirt 11, QEMU 10)
#   vmbench/network-passt-binding                       (FROM scratch, USER 107: the passt binding sidecar)
# The operator derives every component's image from its own prefix and tag, so the one prefix
# "vmbench" and the release tag are all the install needs. The Dockerfiles and small files are in
# images/kubevirt/; KubeVirt's own configuration files are taken from the module at build time.
#
# Offline, everything is built from kubevirt.io/kubevirt in the Go module cache: its zip lacks the
# nested modules staging/src/kubevirt.io/{api,client-go}, so a writable copy under bin/.build gets
# those modules' sources of the same version, and `GOWORK=off go build` runs there. Online, the
# released images are pulled and retagged, all but virt-operator (below).
#
# The VMI checksum schema clash: KubeVirt <= v1.8.2's generated CRD validation says `format: int32`
# for status fields that are uint32 in Go (the containerDisk/kernel/initrd checksums, VSOCKCID).
# Kubernetes 1.36 enforces integer formats, so a CRC above 2^31 makes every VMI status update fail
# ("Checked value must be of type integer with format int32"). Upstream fixed the schema to int64
# with bounds 0..4294967295: kubevirt/kubevirt PR #17469 (checksums) and PR #17690 (VSOCKCID); no
# release on the module proxy has the fix (issue #17858: v1.8.2 still affected).
# Chosen: a build-time patch. The operator creates the VMI CRD from the compiled-in
# pkg/virt-operator/resource/generate/components/validations_generated.go, so `go build -overlay`
# swaps in a copy of that file generated here from the module cache with exactly those schemas
# changed as upstream changed them (checksum_overlay). Rejected: patching the CRD in the cluster (the
# operator reverts it); a node image whose Kubernetes does not enforce formats (hides the bug, and
# the cluster must stay 1.36); v1.8.0 (still affected). Because the released virt-operator carries
# the bug, virt-operator is built here online too; the other released images are unaffected.
#
# Every step is cached (bin/stamps); an unchanged input is never rebuilt. Outputs besides the images:
# bin/kubevirt-<version>/bin/ (binaries, manifest-templator for hack/kind/kubevirt.sh).
# Usage: hack/images/kubevirt.sh         (VMBENCH_OFFLINE=1 skips the online attempt)
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

version=${KUBEVIRT_VERSION:-v1.7.0}
prefix=vmbench
upstream=quay.io/kubevirt
work="${BIN}/.build/kubevirt-${version}"
src="${work}/src"
out="${BIN}/kubevirt-${version}/bin"
files="${ROOT}/images/kubevirt"
validations=pkg/virt-operator/resource/generate/components/validations_generated.go

module_dir() { (cd "${BIN}" && go mod download -json "$1@${version}" | jq -r '.Dir // empty'); }

# --- Go sources ---

source_tree() {
  local kv api cg
  kv=$(module_dir kubevirt.io/kubevirt) && api=$(module_dir kubevirt.io/api) && cg=$(module_dir kubevirt.io/client-go) || return
  if [ -z "${kv}" ] || [ -z "${api}" ] || [ -z "${cg}" ]; then
    log "kubevirt.io/{kubevirt,api,client-go}@${version} are not all in the module proxy"
    return 1
  fi
  rm -rf "${src}" && mkdir -p "${work}" && cp -r "${kv}" "${src}" && chmod -R u+w "${src}" &&
    rm -rf "${src}/staging/src/kubevirt.io/api" "${src}/staging/src/kubevirt.io/client-go" &&
    cp -r "${api}" "${src}/staging/src/kubevirt.io/api" && cp -r "${cg}" "${src}/staging/src/kubevirt.io/client-go" &&
    chmod -R u+w "${src}/staging"
}

# checksum_overlay: writes ${work}/overlay.json, which makes `go build -overlay` compile an edited
# copy of the generated validations: in the schema of each uint32 status field, `format: int32`
# becomes `format: int64` with `maximum: 4294967295` and `minimum: 0` (upstream PRs #17469, #17690).
# Fails unless exactly the expected four schemas changed, so a different KubeVirt version cannot
# be patched silently wrong.
checksum_overlay() {
  local dir="${work}/overlay" edited
  edited="${dir}/$(basename "${validations}")"
  mkdir -p "${dir}" || return
  awk '
    function indent(s) { match(s, /^ */); return RLENGTH }
    field && $0 !~ /^ *$/ && indent($0) <= field_indent { field = 0 }
    field && /^ *format: int32$/ {
      pad = substr($0, 1, indent($0))
      print pad "format: int64"; print pad "maximum: 4294967295"; print pad "minimum: 0"
      edits++; next
    }
    /^ *(checksum|VSOCKCID):$/ { field = 1; field_indent = indent($0) }
    { print }
    END { if (edits != 4) { print "expected 4 uint32 schemas, changed " edits > "/dev/stderr"; exit 1 } }
  ' "$(module_dir kubevirt.io/kubevirt)/${validations}" > "${edited}" || return
  jq -n --arg from "${src}/${validations}" --arg to "${edited}" '{Replace: {($from): $to}}' > "${work}/overlay.json"
}

# go_build CGO PKG...: builds PKGs from the source tree into ${out}, as upstream builds them (tag
# selinux, version stamps), with the checksum overlay.
go_build() {
  local cgo=$1 commit ldflags v
  shift
  commit=$(cd "${BIN}" && go mod download -json "kubevirt.io/kubevirt@${version}" | jq -r '.Origin.Hash // empty')
  ldflags="-s -w"
  for v in "gitVersion=${version}" "gitCommit=${commit}" "gitTreeState=clean"; do
    ldflags+=" -X kubevirt.io/client-go/version.${v}"
  done
  mkdir -p "${out}" &&
    (cd "${src}" && GOWORK=off CGO_ENABLED="${cgo}" go build -mod=mod -overlay "${work}/overlay.json" \
      -tags selinux -ldflags "${ldflags}" -o "${out}/" "$@")
}

operator_binaries() { go_build 1 ./cmd/virt-operator ./tools/csv-generator ./tools/manifest-templator; }
control_binaries() { go_build 1 ./cmd/virt-api ./cmd/virt-controller; }
# Only virt-launcher links libvirt (libvirt-go compiles against bookworm's older libvirt by
# conditional compilation and runs against trixie's); virt-handler's node labeller includes
# <linux/kvm.h>. Built on this bookworm host, they run on trixie's newer glibc.
node_binaries() {
  apt_ensure gcc libc6-dev pkg-config libvirt-dev &&
    go_build 1 ./cmd/virt-handler ./cmd/virt-chroot ./cmd/virt-launcher ./cmd/virt-launcher-monitor \
      ./cmd/virt-freezer ./cmd/virt-probe ./cmd/virt-tail &&
    gcc -O2 -static -o "${out}/container-disk" "${src}/cmd/container-disk-v2alpha/main.c"
}
# FROM scratch: no libc, so no cgo.
passt_binding_binary() { go_build 0 ./cmd/sidecars/network-passt-binding; }

# binaries NAME FUNC BINARY...: runs FUNC as a cached step unless its inputs are unchanged and
# every BINARY is there.
binaries() {
  local name=$1 fn=$2 b
  shift 2
  for b in "$@"; do [ -x "${out}/${b}" ] || rm -f "${BIN}/stamps/kubevirt-${version}-${name}"; done
  cached_step "kubevirt-${version}-${name}" "$(inputs_hash "${version}" "$(go env GOVERSION)" \
    "${work}/overlay" "$(declare -f go_build "${fn}")")" "${fn}"
}

# --- Images ---

# context NAME FILE...: a fresh build context ${work}/context/NAME with FILEs; binaries are hard
# links, KubeVirt's files from the read-only module cache get their upstream modes.
context() {
  local dir="${work}/context/$1" f
  shift
  rm -rf "${dir}" && mkdir -p "${dir}" || return
  for f in "$@"; do
    case "${f}" in
      *.sh | */cmd/virt-launcher/qemu | */virtqemud) install -m 0755 "${f}" "${dir}/" ;; # qemu: the libvirt hook
      "${GOMODCACHE}"/*) install -m 0644 "${f}" "${dir}/" ;;
      *) cp -l "${f}" "${dir}/" 2>/dev/null || cp "${f}" "${dir}/" ;;
    esac || return
  done
}

# docker_build IMAGE DOCKERFILE CONTEXT [DOCKER-BUILD-ARG...]: quiet unless it fails (the CLI's
# notice that the legacy builder is deprecated is noise here: there is no buildx).
docker_build() {
  local image=$1 dockerfile=$2 dir=$3 out
  shift 3
  out=$(docker build -q --label "io.vmbench.kubevirt=${version}" -f "${files}/${dockerfile}" -t "${image}" "$@" "${dir}" 2>&1) ||
    { printf '%s\n' "${out}" >&2; return 1; }
}

kv_dir() { module_dir kubevirt.io/kubevirt; }

build_virt-operator() {
  binaries operator operator_binaries virt-operator csv-generator manifest-templator &&
    context virt-operator "${out}/virt-operator" "${out}/csv-generator" &&
    docker_build "${prefix}/virt-operator:${version}" virt-operator.Dockerfile "${work}/context/virt-operator"
}
build_virt-api() {
  binaries control control_binaries virt-api virt-controller &&
    context virt-api "${out}/virt-api" &&
    docker_build "${prefix}/virt-api:${version}" virt-api.Dockerfile "${work}/context/virt-api"
}
build_virt-controller() {
  binaries control control_binaries virt-api virt-controller &&
    context virt-controller "${out}/virt-controller" &&
    docker_build "${prefix}/virt-controller:${version}" virt-controller.Dockerfile "${work}/context/virt-controller"
}
node_base() {
  local kv
  kv=$(kv_dir) && "${ROOT}/hack/images/debian-base.sh" trixie &&
    context node-base "${kv}/cmd/virt-handler/nsswitch.conf" &&
    docker_build "${node_base}" node-base.Dockerfile "${work}/context/node-base"
}
# node_base_image: the trixie base of virt-handler and virt-launcher, built only when one of them is.
node_base_image() {
  image_exists "${node_base}" || rm -f "${BIN}/stamps/kubevirt-${version}-node-base"
  cached_step "kubevirt-${version}-node-base" "$(inputs_hash "${version}" "${files}/node-base.Dockerfile" \
    "$(declare -f node_base context docker_build)")" node_base
}
build_virt-handler() {
  node_base_image && binaries node node_binaries "${node_bins[@]}" &&
    context virt-handler "${out}/virt-handler" "${out}/virt-chroot" &&
    docker_build "${prefix}/virt-handler:${version}" virt-handler.Dockerfile "${work}/context/virt-handler" \
      --build-arg "BASE_IMAGE=${node_base}"
}
build_virt-launcher() {
  local kv b files_in=()
  kv=$(kv_dir) || return
  for b in virt-launcher virt-launcher-monitor virt-freezer virt-probe virt-tail container-disk; do files_in+=("${out}/${b}"); done
  node_base_image && binaries node node_binaries "${node_bins[@]}" &&
    context virt-launcher "${files_in[@]}" "${kv}/cmd/virt-launcher/node-labeller/node-labeller.sh" \
      "${kv}/cmd/virt-launcher/qemu.conf" "${kv}/cmd/virt-launcher/virtqemud.conf" "${kv}/cmd/virt-launcher/qemu" \
      "${files}/virtqemud" &&
    docker_build "${prefix}/virt-launcher:${version}" virt-launcher.Dockerfile "${work}/context/virt-launcher" \
      --build-arg "BASE_IMAGE=${node_base}"
}
build_network-passt-binding() {
  binaries passt-binding passt_binding_binary network-passt-binding &&
    context network-passt-binding "${out}/network-passt-binding" &&
    docker_build "${prefix}/network-passt-binding:${version}" network-passt-binding.Dockerfile \
      "${work}/context/network-passt-binding"
}

# pull NAME: online, the released image NAME, retagged into the vmbench prefix.
pull() {
  [ "${VMBENCH_OFFLINE:-}" = 1 ] && return 1
  timeout 60 docker pull -q "${upstream}/$1:${version}" >/dev/null 2>&1 || return 1
  docker tag "${upstream}/$1:${version}" "${prefix}/$1:${version}"
}

# image NAME [pull]: makes ${prefix}/NAME:${version}, cached on everything it is made from.
image() {
  local name=$1 mode=${2:-build} stamp="kubevirt-${version}-image-$1"
  image_exists "${prefix}/${name}:${version}" || rm -f "${BIN}/stamps/${stamp}"
  cached_step "${stamp}" "$(inputs_hash "${version}" "${mode}" "$(go env GOVERSION)" "${work}/overlay" "${files}" \
    "$(declare -f pull context docker_build node_base go_build "build_${name}" operator_binaries control_binaries \
      node_binaries passt_binding_binary)")" make_image "${name}" "${mode}"
}
make_image() {
  if [ "$2" = pull ] && pull "$1"; then
    log "online: ${prefix}/$1:${version} is the released image"
  else
    "build_$1"
  fi
}

node_base="${prefix}/kubevirt-node-base:${version}"
node_bins=(virt-handler virt-chroot virt-launcher virt-launcher-monitor virt-freezer virt-probe virt-tail container-disk)
GOMODCACHE=$(go env GOMODCACHE)

[ -f "${src}/go.mod" ] || rm -f "${BIN}/stamps/kubevirt-${version}-source"
cached_step "kubevirt-${version}-source" "$(inputs_hash "${version}" "$(declare -f source_tree)")" source_tree
step "kubevirt ${version}: checksum schema overlay" checksum_overlay
"${ROOT}/hack/images/debian-base.sh" bookworm

# manifest-templator for hack/kind/kubevirt.sh, built with the operator.
binaries operator operator_binaries virt-operator csv-generator manifest-templator
# The released virt-operator has the checksum schema bug: always built.
image virt-operator
image virt-api pull
image virt-controller pull
image virt-handler pull
image virt-launcher pull
image network-passt-binding pull

docker images --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep -E "^${prefix}/(virt-|network-passt-binding:)" | grep ":${version}" >&2
