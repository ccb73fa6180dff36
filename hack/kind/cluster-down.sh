#!/usr/bin/env bash
# Deletes the kind cluster `vmbench` and what cluster-up.sh left for it (its kubeconfig, the host
# directory of the vmbench-shared class, kind's docker network when nothing else uses it). The
# images, cached binaries and the registry beside the cluster (hack/kind/registry.sh, with the
# images pushed to it) stay, so the next cluster-up and install are fast; --purge also removes the
# registry with its volume and every image the hack/kind and hack/images scripts built, with the
# kubernetes tarball and the stamps that point at them: the node image and its parts, KubeVirt's,
# the VM disk, the runner, manager, Prometheus, MPI Operator and registry images.
# Usage: hack/kind/cluster-down.sh [--purge]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

purge=0
[ "${1:-}" = --purge ] && purge=1
kind=$("${here}/kind-cli.sh")

delete() {
  "${kind}" delete cluster --name "${CLUSTER_NAME}" || return
  rm -f "${BIN}/kind/${CLUSTER_NAME}.kubeconfig" "${BIN}/kind/${CLUSTER_NAME}-cluster.yaml"
  # The volumes of the vmbench-shared class, which the nodes mounted from here: the pods wrote them
  # as root and uid 1000.
  rm -rf "${BIN}/kind/shared" || log "could not remove ${BIN}/kind/shared, which the cluster's shared volumes left: remove it as root"
  remove_unused_network
}

remove_unused_network() {
  if docker network inspect kind >/dev/null 2>&1 &&
    [ "$(docker network inspect -f '{{len .Containers}}' kind)" = 0 ]; then
    docker network rm kind >/dev/null
  fi
}

purge_images() {
  local images
  "${here}/registry.sh" down --purge && remove_unused_network || return
  mapfile -t images < <(docker images --format '{{.Repository}}:{{.Tag}}' |
    grep -E '^(vmbench/(debian|k8s-base|kind-base|kind-node|kind-smoke|flannel|flannel-cni-plugin|virt-[a-z-]+|kubevirt-[a-z-]+|network-passt-binding|vm-disk|prometheus|runner|manager|registry):|mpioperator/|registry\.k8s\.io/|kindest/)|^'"${LOCAL_REGISTRY}/vmbench-")
  [ "${#images[@]}" -eq 0 ] || docker rmi "${images[@]}" >/dev/null ||
    log "some images are still used by containers and stay (see above)"
  rm -rf "${BIN}/kind" "${BIN}/.build/kind-images" "${BIN}/.build/kind-smoke"
  rm -f "${BIN}"/stamps/{debian-*,node-base-*,kind-images,kind-tarball,node-image,kubevirt-*,vm-disk*,image-prometheus,mpi-operator-*}
}

with_lock "cluster-${CLUSTER_NAME}" step "delete cluster ${CLUSTER_NAME}" delete
[ "${purge}" = 0 ] || step "purge images" purge_images
