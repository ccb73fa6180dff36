#!/usr/bin/env bash
# Makes the image mpioperator/mpi-operator:<version>, the name the module's own deployment manifest
# uses, so that the manifest deploys unchanged but for its pull policy. Online it is pulled; offline
# the operator is built from github.com/kubeflow/mpi-operator in the Go module cache, on the local
# Debian base image.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

version=${MPI_OPERATOR_VERSION:-0.6.0}
image="mpioperator/mpi-operator:${version}"

pull() {
  [ "${VMBENCH_OFFLINE:-}" = 1 ] && return 1
  timeout 60 docker pull -q "${image}" >/dev/null 2>&1
}

build() {
  local src out="${BIN}/mpi-operator-${version}"
  src=$(cd "${ROOT}" && go mod download -json "github.com/kubeflow/mpi-operator@v${version}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -n "${src}" ] || { log "github.com/kubeflow/mpi-operator@v${version} is not in the module proxy"; return 1; }
  mkdir -p "${out}"
  (cd "${src}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -ldflags "-s -w" -o "${out}/mpi-operator" ./cmd/mpi-operator)
  "${ROOT}/hack/images/debian-base.sh" bookworm
  cat > "${out}/Dockerfile" <<'DOCKERFILE'
FROM vmbench/debian:bookworm
COPY mpi-operator /opt/mpi-operator
ENTRYPOINT ["/opt/mpi-operator"]
DOCKERFILE
  docker build -q -t "${image}" "${out}" >/dev/null
}

pull_or_build() { pull || build; }

image_exists "${image}" || rm -f "${BIN}/stamps/mpi-operator-${version}"
cached_step "mpi-operator-${version}" "$(inputs_hash "${version}" "$(declare -f pull build)")" pull_or_build
