#!/usr/bin/env bash
# Builds vmbench's own images from binaries built on this machine: vmbench/manager:dev (the top-level
# Dockerfile) and vmbench/runner:dev (images/runner). Both build FROM the local Debian base image, so
# that the same Dockerfiles work with and without a registry. Docker's layer cache and Go's build
# cache make an unchanged rebuild take seconds.
# Usage: hack/images/vmbench.sh [manager|runner]...   (default: both)
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

tag=${VMBENCH_TAG:-dev}
"${ROOT}/hack/images/debian-base.sh" bookworm

binaries() {
  (cd "${ROOT}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${BIN}/" ./cmd/manager ./cmd/runner ./cmd/vmbench)
}
image() {
  local name=$1 dockerfile=$2
  (cd "${ROOT}" && docker build -q --build-arg BASE_IMAGE=vmbench/debian:bookworm -f "${dockerfile}" -t "${name}" . >/dev/null)
}

step "go build manager, runner, vmbench" binaries
[ "$#" -gt 0 ] || set -- manager runner
for name in "$@"; do
  case "${name}" in
    manager) step "image vmbench/manager:${tag}" image "vmbench/manager:${tag}" Dockerfile ;;
    runner) step "image vmbench/runner:${tag}" image "vmbench/runner:${tag}" images/runner/Dockerfile ;;
    *) log "no image ${name}: use manager or runner"; exit 2 ;;
  esac
done
