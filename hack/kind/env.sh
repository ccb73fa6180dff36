# shellcheck shell=bash disable=SC2034
# Versions and names of everything the kind cluster is built from, and the kubectl lookup; sourced
# by the hack/kind scripts after hack/lib.sh. The image tags are the ones kind v0.33.0 and kubeadm
# v1.36.3 ask for.
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.14.2}"
LOCAL_PATH_VERSION="${LOCAL_PATH_VERSION:-v0.0.30}"
# flannel v0.27.0 resolves but is missing from the checksum database (404); v0.26.7 verifies.
FLANNEL_VERSION="${FLANNEL_VERSION:-v0.26.7}"
FLANNEL_CNI_VERSION="${FLANNEL_CNI_VERSION:-v0.9.1}"
PAUSE_VERSION="${PAUSE_VERSION:-3.10.2}"
# Image names kind's node-image build requires (pkg/build/nodeimage/const_*.go in kind v0.33.0).
KINDNETD_IMAGE="docker.io/kindest/kindnetd:v20260820-69b56db7"
LOCAL_PATH_PROVISIONER_IMAGE="docker.io/kindest/local-path-provisioner:v20260820-69b56db7"
LOCAL_PATH_HELPER_IMAGE="docker.io/kindest/local-path-helper:v20260131-7181c60a"
SANDBOX_IMAGE="registry.k8s.io/pause:3.10"
CLUSTER_NAME="${CLUSTER_NAME:-vmbench}"
NODE_IMAGE="vmbench/kind-node:v${K8S_VERSION}"
# The OCI registry beside the cluster (hack/kind/registry.sh): the host pushes to LOCAL_REGISTRY,
# the nodes pull LOCAL_REGISTRY/... from the container REGISTRY_NAME on kind's network.
REGISTRY_VERSION="${REGISTRY_VERSION:-v3.1.2}"
REGISTRY_NAME=vmbench-registry
REGISTRY_PORT="${REGISTRY_PORT:-5001}"
LOCAL_REGISTRY="localhost:${REGISTRY_PORT}"

# Every image the hack/kind scripts build carries this label (the node image inherits it from the
# node base), so that the old versions they replace can be pruned without touching anyone else's.
KIND_IMAGE_LABEL="io.vmbench.kind=true"
prune_replaced_images() { docker image prune -f --filter "label=${KIND_IMAGE_LABEL}" >/dev/null; }

# kind_node_online IMAGE: the released node image IMAGE is here or can be pulled, and this machine has
# CAP_SYS_RESOURCE (without it the node's containerd needs the runc wrapper that only the offline
# image, node-base/configure-missing-caps.sh, sets up); otherwise the node image is built offline.
kind_node_online() {
  [ "${VMBENCH_OFFLINE:-}" != 1 ] && ! lacks_sys_resource || return 1
  image_exists "$1" || timeout 120 docker pull -q "$1" >/dev/null 2>&1
}

# kind_kubectl: a kubectl of the cluster's version: the one built for the node image, else envtest's
# (which hack/envtest-assets.sh downloads online and builds offline).
kind_kubectl() {
  local built="${BIN}/k8s-server/v${K8S_VERSION}/kubectl"
  if [ -x "${built}" ]; then echo "${built}"; else echo "$("${ROOT}/hack/envtest-assets.sh")/kubectl"; fi
}

# missing_images IMAGE...: the IMAGEs that some node of the cluster lacks, or has with another image
# ID than the local Docker, one per line. kind's own check needs crictl, which the offline node image
# lacks, so `kind load` alone would copy every image every time. One `docker exec` per node.
missing_images() {
  local node image manifest id listing nodes
  declare -A stale=()
  nodes=$("$("${ROOT}/hack/kind/kind-cli.sh")" get nodes --name "${CLUSTER_NAME}") || return
  for node in ${nodes}; do
    # shellcheck disable=SC2016 # expanded in the node
    listing=$(docker exec "${node}" sh -c 'for i; do
        m=$(ctr --namespace=k8s.io images ls "name==docker.io/$i" | awk "NR == 2 {print \$3}")
        printf "%s %s\n" "$i" "$([ -z "$m" ] || ctr --namespace=k8s.io content get "$m" | tr -d "\n")"
      done' sh "$@") || return
    while read -r image manifest; do
      id=$(docker image inspect -f '{{.Id}}' "${image}") || return
      [ "$(jq -r '.config.digest // empty' <<<"${manifest}" 2>/dev/null)" = "${id}" ] || stale[${image}]=1
    done <<<"${listing}"
  done
  for image in "$@"; do [ -z "${stale[${image}]:-}" ] || echo "${image}"; done
}

# kind_load IMAGE...: loads into the nodes the IMAGEs that missing_images names, in one `kind load`,
# and leaves their names in kind_loaded (empty when every node had them all).
kind_loaded=()
kind_load() {
  local missing
  kind_loaded=()
  missing=$(missing_images "$@") || return
  if [ -z "${missing}" ]; then
    log "every node has $*"
    return 0
  fi
  mapfile -t kind_loaded <<<"${missing}"
  "$("${ROOT}/hack/kind/kind-cli.sh")" load docker-image --name "${CLUSTER_NAME}" "${kind_loaded[@]}" >&2
}
