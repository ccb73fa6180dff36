#!/usr/bin/env bash
# Makes the local Debian base image vmbench/debian:<suite> (default bookworm) that every vmbench image
# builds FROM. Online, it is debian:<suite>-slim from Docker Hub, re-tagged; offline (no registry
# reachable), it is a debootstrap --variant=minbase root file system from the Debian archive, imported
# with `docker import`. Cached: an existing image built by the same recipe is kept.
# Usage: hack/images/debian-base.sh [SUITE]
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

suite=${1:-bookworm}
image="vmbench/debian:${suite}"
mirror=$(debian_mirror)

pull() {
  [ "${VMBENCH_OFFLINE:-}" = 1 ] && return 1
  timeout 60 docker pull -q "debian:${suite}-slim" >/dev/null 2>&1 || return 1
  docker tag "debian:${suite}-slim" "${image}"
}

debootstrap_import() {
  local root="${BIN}/.build/debootstrap-${suite}"
  apt_ensure debootstrap debian-archive-keyring || return
  rm -rf "${root}" && mkdir -p "${root}" || return
  debootstrap --variant=minbase "${suite}" "${root}" "${mirror}" >"${root}.log" 2>&1 ||
    { tail -n 20 "${root}.log" >&2; return 1; }
  # The updates and security suites as on a stock image; no caches or package lists in the layer.
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s-security %s-security main\n' \
    "${mirror}" "${suite}" "${mirror}" "${suite}" "${mirror}" "${suite}" >"${root}/etc/apt/sources.list"
  rm -rf "${root}"/var/cache/apt/archives/*.deb "${root}"/var/lib/apt/lists/* "${root}"/var/log/*.log
  tar --numeric-owner -C "${root}" -c . |
    docker import --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      - "${image}" >/dev/null || return
  rm -rf "${root}" "${root}.log"
}

build() {
  if pull; then
    log "online: ${image} is debian:${suite}-slim"
  else
    log "no registry: ${image} from debootstrap --variant=minbase ${suite}"
    debootstrap_import
  fi
}

image_exists "${image}" || rm -f "${BIN}/stamps/debian-${suite}"
cached_step "debian-${suite}" "$(inputs_hash "${suite}" "${mirror}" "$(declare -f pull debootstrap_import)")" build
