#!/usr/bin/env bash
# Prints the path of the kind CLI at KIND_VERSION, building it from the Go module proxy into
# bin/tools/ first when missing (no GitHub release downloads here).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

kind="${BIN}/tools/kind-${KIND_VERSION}"
build() {
  local gobin="${BIN}/.build/kind-cli"
  GOBIN="${gobin}" CGO_ENABLED=0 go install -ldflags "-s -w" "sigs.k8s.io/kind@${KIND_VERSION}" &&
    mkdir -p "${BIN}/tools" && mv "${gobin}/kind" "${kind}"
}
[ -x "${kind}" ] || step "build kind ${KIND_VERSION}" build >&2
echo "${kind}"
