#!/usr/bin/env bash
# Builds vmbench/prometheus:dev (images/prometheus): Debian's prometheus package on the local Debian
# base image, so that no registry is needed. Rebuilt only when the Dockerfile or the base image
# changes.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

image=${PROMETHEUS_IMAGE:-vmbench/prometheus:dev}
"${ROOT}/hack/images/debian-base.sh" bookworm

build() {
  docker build -q --build-arg BASE_IMAGE=vmbench/debian:bookworm -t "${image}" "${ROOT}/images/prometheus" >/dev/null
}

image_exists "${image}" || rm -f "${BIN}/stamps/image-prometheus"
cached_step "image-prometheus" \
  "$(inputs_hash "${ROOT}/images/prometheus" "${image}" "$(docker image inspect -f '{{.Id}}' vmbench/debian:bookworm)")" build
