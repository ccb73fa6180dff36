#!/usr/bin/env bash
# Builds vmbench/seaweedfs:dev (images/seaweedfs): SeaweedFS's weed as hack/seaweedfs.sh builds it
# from the Go module proxy (statically linked), alone FROM scratch, online and offline alike (no
# released image is needed). The kind e2e runs it as the S3-compatible server its archive writes to
# (hack/kind/archive.sh). Rebuilt only when the binary or the Dockerfile changes.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

image=${SEAWEEDFS_IMAGE:-vmbench/seaweedfs:dev}
weed=$("${ROOT}/hack/seaweedfs.sh")
# An image FROM scratch has no C library: a binary built with cgo would not start in it.
go version -m "${weed}" | grep -q '^[[:space:]]*build[[:space:]]*CGO_ENABLED=0$' ||
  { log "${weed} was not built with CGO_ENABLED=0: delete it and run hack/seaweedfs.sh again"; exit 1; }

build() {
  local context="${BIN}/.build/seaweedfs-image"
  rm -rf "${context}" && mkdir -p "${context}" &&
    cp "${ROOT}/images/seaweedfs/Dockerfile" "${context}/" &&
    { cp -l "${weed}" "${context}/weed" 2>/dev/null || cp "${weed}" "${context}/weed"; } &&
    docker build -q -t "${image}" "${context}" >/dev/null &&
    rm -rf "${context}"
}

image_exists "${image}" || rm -f "${BIN}/stamps/image-seaweedfs"
cached_step "image-seaweedfs" "$(inputs_hash "${ROOT}/images/seaweedfs" "${weed}" "${image}")" build
