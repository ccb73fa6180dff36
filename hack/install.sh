#!/usr/bin/env bash
# Installs the MPI Operator, KubeVirt and vmbench into the kind cluster of hack/kind/cluster-up.sh.
# vmbench's three images (manager, runner, VM disk) reach the nodes as on any real cluster: built,
# pushed by hack/images/push.sh to the registry beside the cluster (hack/kind/registry.sh,
# localhost:5001) under a tag derived from their content, and pulled by each node's containerd; the
# chart gets global.registry and global.tag. The images of the MPI Operator, KubeVirt and Prometheus,
# which a real cluster brings along, are loaded into the nodes with `kind load` (pull policy
# IfNotPresent). Then: the MPI Operator with the manifest from its own module, KubeVirt
# (hack/kind/kubevirt.sh, which probes KVM and the VM network), vmbench with its Helm chart
# (charts/vmbench, release vmbench), and a Prometheus that scrapes it (hack/kind/prometheus.sh).
# KubeVirt comes before vmbench: the manager looks for the VMI API when it starts.
# VMBENCH_HELM_ARGS adds arguments to helm, e.g. "--set vmNetwork=passt". With VMBENCH_E2E_ARCHIVE=1
# (make test-e2e), the S3-compatible server of hack/kind/archive.sh runs in the cluster too, and the
# chart's archive.s3 points at it. Metrics are served over plain HTTP (metrics.secure=false): the
# Prometheus of hack/kind/prometheus.sh scrapes them without a token, and the e2e reads them through
# the API server's service proxy, which sends none; the e2e case TestShippedMetricsSetUpAnswersAScraperToken
# turns the shipped HTTPS set-up on for itself and off again. The manager allows schedules to start every
# minute (minScheduleInterval=1m, 5m by default), as the e2e's schedule does to gather three records
# in minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/lib.sh"
source "${here}/kind/env.sh"

export KUBECONFIG="${BIN}/kind/${CLUSTER_NAME}.kubeconfig"
kubectl=$(kind_kubectl)
mpi_version=${MPI_OPERATOR_VERSION:-0.6.0}

# push_images: the registry up and known to the nodes, the images pushed under their content tag
# (push.sh prints REGISTRY/vmbench-<name>:<tag>@<digest>, one a line, the same tag on each), and the
# older tags pruned, under a lock so that no push runs while the registry collects garbage.
tag=""
push_images() {
  local pushed
  "${here}/kind/registry.sh" && "${here}/kind/registry.sh" nodes || return
  pushed=$("${here}/images/push.sh" "${LOCAL_REGISTRY}") || return
  tag=$(head -n 1 <<<"${pushed}")
  tag=${tag%@*}
  tag=${tag##*:}
  "${here}/kind/registry.sh" prune "${tag}"
}
with_lock registry-push push_images
"${here}/images/mpi-operator.sh"
step "load images into the nodes" kind_load "mpioperator/mpi-operator:${mpi_version}"

mpi_operator() {
  local dir
  dir=$(cd "${ROOT}" && go mod download -json "github.com/kubeflow/mpi-operator@v${mpi_version}" | jq -r .Dir)
  sed 's/imagePullPolicy: Always/imagePullPolicy: IfNotPresent/' "${dir}/deploy/v2beta1/mpi-operator.yaml" |
    "${kubectl}" apply --server-side --force-conflicts --field-manager=vmbench-install -f - >/dev/null
  "${kubectl}" -n mpi-operator rollout status deployment/mpi-operator --timeout=300s
}

# kustomize_leftovers: an install by `kubectl apply -k config/default` (before the chart) left
# objects that helm refuses to adopt. They go, except the CRD and the namespace: deleting the CRD
# would delete every suite.
kustomize_leftovers() {
  local found
  found=$("${kubectl}" -n vmbench-system get deployment vmbench-manager --ignore-not-found \
    -o jsonpath='{.metadata.name} {.metadata.labels.app\.kubernetes\.io/managed-by}')
  case "${found}" in "" | *" Helm") return 0 ;; esac
  log "removing the kustomize install of vmbench (suites and their CRD stay)"
  "${kubectl}" -n vmbench-system delete --ignore-not-found --wait=true \
    deployment/vmbench-manager service/vmbench-metrics serviceaccount/vmbench-manager \
    role/vmbench-leader-election rolebinding/vmbench-leader-election >/dev/null
  "${kubectl}" delete --ignore-not-found clusterrole/vmbench-manager clusterrolebinding/vmbench-manager \
    clusterrole/vmbench-suites-edit clusterrole/vmbench-suites-view >/dev/null
  local policy
  for policy in privileged-platforms manager-secrets manager-children suite-status schedule-status; do
    "${kubectl}" delete --ignore-not-found validatingadmissionpolicy/vmbench-${policy} \
      validatingadmissionpolicybinding/vmbench-${policy} >/dev/null
  done
}

vmbench() {
  local helm args=() archive=()
  helm=$("${ROOT}/hack/helm.sh")
  kustomize_leftovers
  # helm installs crds/ only when they are missing and never upgrades them: apply them, so that an
  # API change reaches the cluster.
  "${kubectl}" apply --server-side --force-conflicts --field-manager=vmbench-install -f "${ROOT}/charts/vmbench/crds" >/dev/null
  read -r -a args <<<"${VMBENCH_HELM_ARGS:-}"
  read -r -a archive <<<"${archive_args}"
  # A rebuilt image has a new tag, so IfNotPresent never runs a stale one and an unchanged install
  # restarts nothing.
  "${helm}" upgrade --install vmbench "${ROOT}/charts/vmbench" --namespace vmbench-system --create-namespace \
    --set global.registry="${LOCAL_REGISTRY}" --set global.tag="${tag}" \
    --set image.pullPolicy=IfNotPresent --set imagePullPolicy=IfNotPresent \
    --set metrics.secure=false --set minScheduleInterval=1m \
    "${archive[@]}" "${args[@]}" >/dev/null
  "${kubectl}" -n vmbench-system rollout status deployment/vmbench-manager --timeout=300s
}

step "MPI Operator v${mpi_version}" mpi_operator
"${here}/kind/kubevirt.sh"
# archive_args: helm's arguments for the archive, which hack/kind/archive.sh prints.
archive_args=""
[ -z "${VMBENCH_E2E_ARCHIVE:-}" ] || archive_args=$("${here}/kind/archive.sh")
step "vmbench (images ${LOCAL_REGISTRY}/vmbench-{manager,runner,vm-disk}:${tag})" vmbench
"${here}/kind/prometheus.sh"
