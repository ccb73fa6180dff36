#!/usr/bin/env bash
# Builds the kind node image vmbench/kind-node:v<version> with `kind build node-image --type file`
# from the node base image and the kubernetes tarball of images.sh: the only build type that needs
# no download. It builds its inputs first: the Kubernetes server binaries (k8s-binaries.sh), the
# add-ons (addons.sh), the base image (node-base.sh) and the tarball (images.sh). kind leaves a large k8s-tar-extract-* directory behind; it goes to a private temporary
# directory under bin/ that is removed afterwards. Cached on the tarball and the base image.
# Usage: hack/kind/node-image.sh [SUITE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

suite=${1:-bookworm}
base="vmbench/kind-base:${suite}"
tarball="${BIN}/kind/kubernetes-v${K8S_VERSION}.tar.gz"

"${here}/k8s-binaries.sh"
"${here}/addons.sh"
"${here}/node-base.sh" "${suite}"
"${here}/images.sh" "${suite}"
kind=$("${here}/kind-cli.sh")

build() {
  local tmp="${BIN}/.build/node-image-tmp" rc=0
  rm -rf "${tmp}" && mkdir -p "${tmp}" || return
  TMPDIR="${tmp}" "${kind}" build node-image --type file "${tarball}" --base-image "${base}" \
    --image "${NODE_IMAGE}" || rc=$?
  rm -rf "${tmp}"
  return "${rc}"
}

image_exists "${NODE_IMAGE}" || rm -f "${BIN}/stamps/node-image"
cached_step "node-image" "$(inputs_hash "${KIND_VERSION}" "$(cat "${BIN}/stamps/kind-tarball")" \
  "$(docker image inspect -f '{{.Id}}' "${base}")")" build
prune_replaced_images
