#!/usr/bin/env bash
# Builds the kind node base image vmbench/kind-base:<suite> (the `--base-image` of `kind build
# node-image`) FROM the local Debian base, with Debian's containerd/runc/CNI plugins and kind's own
# images/base/files, read at build time from the kind module in the Go module cache. Cached on the
# build context's content and the Debian base's image ID.
# Usage: hack/kind/node-base.sh [SUITE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

suite=${1:-bookworm}
base="vmbench/debian:${suite}"
image="vmbench/kind-base:${suite}"
ctx="${BIN}/.build/node-base-${suite}"

context() {
  local kind_dir
  kind_dir=$(cd "${BIN}" && go mod download -json "sigs.k8s.io/kind@${KIND_VERSION}" | jq -r .Dir) || return
  rm -rf "${ctx}" && mkdir -p "${ctx}/vmbench" || return
  cp -r "${kind_dir}/images/base/files" "${ctx}/kind" && chmod -R u+w,a+rX,go-w "${ctx}/kind" &&
    chmod 0755 "${ctx}"/kind/usr/local/bin/* "${ctx}"/kind/kind/bin/* || return
  install -D -m 0755 "${here}/node-base/ctr" "${ctx}/vmbench/usr/local/bin/ctr" &&
    install -D -m 0755 "${ROOT}/hack/docker/runc-wrapper.sh" "${ctx}/vmbench/usr/local/libexec/vmbench/runc" &&
    install -D -m 0755 "${here}/node-base/configure-missing-caps.sh" \
      "${ctx}/vmbench/usr/local/libexec/vmbench/configure-missing-caps.sh" &&
    install -D -m 0644 "${here}/node-base/10-vmbench-missing-caps.conf" \
      "${ctx}/vmbench/etc/systemd/system/containerd.service.d/10-vmbench-missing-caps.conf" &&
    cp "${here}/node-base/Dockerfile" "${ctx}/Dockerfile"
}

build() {
  DOCKER_BUILDKIT=0 docker build --label "${KIND_IMAGE_LABEL}" --build-arg "BASE_IMAGE=${base}" -t "${image}" "${ctx}" >"${ctx}.log" 2>&1 ||
    { tail -n 30 "${ctx}.log" >&2; return 1; }
}

"${here}/../images/debian-base.sh" "${suite}"
step "node base context" context
image_exists "${image}" || rm -f "${BIN}/stamps/node-base-${suite}"
cached_step "node-base-${suite}" \
  "$(inputs_hash "${ctx}" "$(docker image inspect -f '{{.Id}}' "${base}")" "$(declare -f build)")" build
