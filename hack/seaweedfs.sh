#!/usr/bin/env bash
# Prints the path of SeaweedFS's `weed` (Apache 2.0), the S3-compatible server that the archive's
# tests write to (internal/archive, test/integration) and that the kind e2e runs in its cluster
# (hack/images/seaweedfs.sh): bin/tools/weed-<SEAWEEDFS_VERSION>-static, built on first use from
# github.com/seaweedfs/seaweedfs in the Go module proxy, online and offline alike (no released binary
# or image is needed). Statically linked (CGO_ENABLED=0, as upstream builds its releases), so that
# the image holds nothing but it. Its go.mod has replace directives, so `go install
# module@version` refuses it: the module's source is copied out of the module cache and built in
# place. A cold build takes about 25 minutes on 2 shared cores (downloads included); later calls are
# instant. Logs go to stderr.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SEAWEEDFS_VERSION="${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
weed="${BIN}/tools/weed-${SEAWEEDFS_VERSION}-static"

build() {
  local work="${BIN}/.build/seaweedfs-${SEAWEEDFS_VERSION}" src
  rm -rf "${work}" && mkdir -p "${work}/download" || return
  # Outside any module, so that no go.mod or go.work of a parent directory is touched.
  src=$(cd "${work}/download" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "github.com/seaweedfs/seaweedfs@${SEAWEEDFS_VERSION}" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "${src}/weed" ] || { log "go mod download gave no source of github.com/seaweedfs/seaweedfs@${SEAWEEDFS_VERSION}"; return 1; }
  # The module cache is read-only; the build writes nothing into the tree, but a copy may be removed.
  cp -r "${src}" "${work}/src" && chmod -R u+w "${work}/src" &&
    (cd "${work}/src" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${weed}.tmp" ./weed) &&
    mv "${weed}.tmp" "${weed}" && rm -rf "${work}"
}

# build_once: under a lock, so that two test runs sharing the cache build it once.
build_once() { [ -x "${weed}" ] || { mkdir -p "${BIN}/tools" && step "build SeaweedFS ${SEAWEEDFS_VERSION} (CGO_ENABLED=0 go build ./weed)" build; }; }

[ -x "${weed}" ] || with_lock "seaweedfs-${SEAWEEDFS_VERSION}" build_once >&2
echo "${weed}"
