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

# Every image the hack/kind scripts build carries this label (the node image inherits it from the
# node base), so that the old versions they replace can be pruned without touching anyone else's.
KIND_IMAGE_LABEL="io.vmbench.kind=true"
prune_replaced_images() { docker image prune -f --filter "label=${KIND_IMAGE_LABEL}" >/dev/null; }

# kind_kubectl: a kubectl of the cluster's version: the one built for the node image, else envtest's
# (which hack/envtest-assets.sh downloads online and builds offline).
kind_kubectl() {
  local built="${BIN}/k8s-server/v${K8S_VERSION}/kubectl"
  if [ -x "${built}" ]; then echo "${built}"; else echo "$("${ROOT}/hack/envtest-assets.sh")/kubectl"; fi
}
