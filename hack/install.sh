#!/usr/bin/env bash
# Installs the MPI Operator and vmbench into the kind cluster of hack/kind/cluster-up.sh: builds the
# images, loads them into the nodes (pull policy IfNotPresent everywhere, so no registry is needed),
# deploys the MPI Operator with the manifest from its own module, and vmbench with config/default.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/lib.sh"
source "${here}/kind/env.sh"

export KUBECONFIG="${BIN}/kind/${CLUSTER_NAME}.kubeconfig"
kubectl=$(kind_kubectl)
kind=$("${here}/kind/kind-cli.sh")
mpi_version=${MPI_OPERATOR_VERSION:-0.6.0}

"${here}/images/vmbench.sh"
"${here}/images/mpi-operator.sh"
step "load images into the nodes" "${kind}" load docker-image --name "${CLUSTER_NAME}" \
  vmbench/manager:dev vmbench/runner:dev "mpioperator/mpi-operator:${mpi_version}"

mpi_operator() {
  local dir
  dir=$(cd "${ROOT}" && go mod download -json "github.com/kubeflow/mpi-operator@v${mpi_version}" | jq -r .Dir)
  sed 's/imagePullPolicy: Always/imagePullPolicy: IfNotPresent/' "${dir}/deploy/v2beta1/mpi-operator.yaml" |
    "${kubectl}" apply --server-side --force-conflicts --field-manager=vmbench-install -f - >/dev/null
  "${kubectl}" -n mpi-operator rollout status deployment/mpi-operator --timeout=300s
}

vmbench() {
  "${kubectl}" apply --server-side --force-conflicts --field-manager=vmbench-install -k "${ROOT}/config/default" >/dev/null
  # The image tag stays "dev": restart so that a freshly loaded image is the one that runs.
  "${kubectl}" -n vmbench-system rollout restart deployment/vmbench-manager >/dev/null
  "${kubectl}" -n vmbench-system rollout status deployment/vmbench-manager --timeout=300s
}

step "MPI Operator v${mpi_version}" mpi_operator
step "vmbench" vmbench
