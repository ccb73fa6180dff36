#!/usr/bin/env bash
# Brings up the kind cluster `vmbench` (1 control plane + 2 workers) for e2e tests and demos.
# Online (kindest/node pulls and the machine has CAP_SYS_RESOURCE), it runs the stock node image
# with kind's default CNI. Offline, everything is built from the Go module proxy and Debian's
# archive, each step cached under bin/: Debian base, Kubernetes and add-on binaries, images, node
# image; then the cluster runs flannel (from the flannel module's manifest) instead of kindnetd.
# Idempotent: an existing cluster is kept: its stopped nodes are started and it is waited for (one
# whose API server does not answer in 3 minutes is made again). The kubeconfig is also written to
# bin/kind/vmbench.kubeconfig. Every node mounts the host directory bin/kind/shared at
# /mnt/vmbench-shared, which backs the ReadWriteMany storage class vmbench-shared
# (hack/kind/shared-storage.yaml).
# Usage: hack/kind/cluster-up.sh        (VMBENCH_OFFLINE=1 skips the online attempt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

start=${SECONDS}
kubeconfig="${BIN}/kind/${CLUSTER_NAME}.kubeconfig"
config="${BIN}/kind/${CLUSTER_NAME}-cluster.yaml"
# The host directory behind the vmbench-shared class, and where every node mounts it.
shared_host_dir="${BIN}/kind/shared"
shared_node_dir=/mnt/vmbench-shared
online_image="kindest/node:v${K8S_VERSION}"

"${ROOT}/hack/docker-up.sh"
kind=$("${here}/kind-cli.sh")

online() { kind_node_online "${online_image}"; }

# kind_config CNI: 1 control plane + 2 workers, each with the shared directory mounted; kubelet 1.36
# refuses cgroup v1 unless told not to.
kind_config() {
  local mount="  extraMounts: [{hostPath: \"${shared_host_dir}\", containerPath: ${shared_node_dir}}]"
  mkdir -p "$(dirname "${config}")" "${shared_host_dir}"
  cat > "${config}" <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  disableDefaultCNI: $([ "$1" = flannel ] && echo true || echo false)
  podSubnet: "10.244.0.0/16"
nodes:
- role: control-plane
${mount}
- role: worker
${mount}
- role: worker
${mount}
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
YAML
}

create() {
  "${kind}" create cluster --name "${CLUSTER_NAME}" --image "$1" --config "${config}" --wait 0s
}

# flannel's own manifest from its module, with the locally built images, loaded into the nodes.
flannel() {
  local dir cni="vmbench/flannel-cni-plugin:${FLANNEL_CNI_VERSION}" flanneld="vmbench/flannel:${FLANNEL_VERSION}"
  dir=$(cd "${BIN}" && go mod download -json "github.com/flannel-io/flannel@${FLANNEL_VERSION}" | jq -r .Dir) || return
  kind_load "${cni}" "${flanneld}" || return
  sed -E -e "s#^( *)image: ghcr.io/flannel-io/flannel-cni-plugin:.*#\1image: ${cni}\n\1imagePullPolicy: IfNotPresent#" \
    -e "s#^( *)image: ghcr.io/flannel-io/flannel:.*#\1image: ${flanneld}\n\1imagePullPolicy: IfNotPresent#" \
    "${dir}/Documentation/kube-flannel.yml" |
    "${kubectl}" --kubeconfig "${kubeconfig}" apply --server-side --field-manager=vmbench-cluster-up -f -
}

# containerd_config: two settings in each node's containerd (new and existing clusters alike), with
# one restart of containerd where either was missing; pods keep running across it.
# - Unprivileged ICMP: every pod sandbox gets net.ipv4.ping_group_range covering all groups, as
#   containerd 2 does by default and 1.6 (Debian's, in the offline node image) does not. Without it
#   KubeVirt's passt binding, which forwards a guest's ICMP through ping sockets, drops every ping
#   between VMs. Only sandboxes made after the restart get it.
# - Registry hosts: config_path, the directory of per-registry hosts.toml files (containerd 1.5 and
#   later), through which hack/kind/registry.sh points localhost:5001 at the registry container.
containerd_config() {
  local node config=/etc/containerd/config.toml cri='[plugins."io.containerd.grpc.v1.cri"]' edits
  for node in $("${kind}" get nodes --name "${CLUSTER_NAME}"); do
    edits=()
    docker exec "${node}" grep -qxF "${cri}" "${config}" ||
      { log "${node}: no ${cri} table in ${config}; containerd keeps its settings"; continue; }
    docker exec "${node}" grep -q '^ *enable_unprivileged_icmp = true' "${config}" ||
      edits+=(-e '/enable_unprivileged_icmp/d' -e 's/^\[plugins."io.containerd.grpc.v1.cri"\]$/&\n  enable_unprivileged_icmp = true/')
    if ! docker exec "${node}" grep -q '^ *config_path *=' "${config}"; then
      if docker exec "${node}" grep -qxF "${cri%]}.registry]" "${config}"; then
        edits+=(-e 's#^\[plugins."io.containerd.grpc.v1.cri".registry\]$#&\n  config_path = "/etc/containerd/certs.d"#')
      else
        edits+=(-e '$a [plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"')
      fi
    fi
    [ "${#edits[@]}" -gt 0 ] || continue
    docker exec "${node}" sed -i "${edits[@]}" "${config}" && docker exec "${node}" systemctl restart containerd || return
    log "${node}: containerd now gives pods unprivileged ICMP and reads registry hosts from /etc/containerd/certs.d"
  done
}

wait_ready() {
  local k=("${kubectl}" --kubeconfig "${kubeconfig}") ns
  "${k[@]}" wait --for=condition=Ready nodes --all --timeout=300s || return
  for ns in kube-system local-path-storage $([ "$1" = flannel ] && echo kube-flannel); do
    # Pods appear a little after their Deployment or DaemonSet: wait for some before waiting on all.
    until [ -n "$("${k[@]}" get pods -n "${ns}" -o name 2>/dev/null)" ]; do sleep 2; done
    "${k[@]}" wait --for=condition=Ready pods --all -n "${ns}" --timeout=300s || return
  done
  "${k[@]}" get nodes -o wide && "${k[@]}" get pods -A -o wide
}

# shared_storage: the storage class vmbench-shared, a second local-path-provisioner in its
# shared-filesystem mode over ${shared_node_dir} (hack/kind/shared-storage.yaml), run from the images
# of kind's own provisioner, which every node has. Only where every node mounts the host directory:
# a cluster made before cluster-up.sh mounted it keeps its nodes, which each would see a directory
# of their own, and gets no class (verify.sh then fails its shared-storage check).
shared_storage() {
  local node mounted k=("${kubectl}" --kubeconfig "${kubeconfig}") provisioner helper
  for node in $("${kind}" get nodes --name "${CLUSTER_NAME}"); do
    mounted=$(docker inspect -f "{{range .Mounts}}{{if eq .Destination \"${shared_node_dir}\"}}{{.Source}}{{end}}{{end}}" "${node}") || return
    if [ -z "${mounted}" ]; then
      log "node ${node} does not mount ${shared_host_dir} at ${shared_node_dir}: the cluster was made before cluster-up.sh" \
        "mounted it, so the ReadWriteMany class vmbench-shared is not installed; make the cluster again with" \
        "hack/kind/cluster-down.sh and hack/kind/cluster-up.sh to have it"
      return 0
    fi
  done
  provisioner=$("${k[@]}" -n local-path-storage get deployment local-path-provisioner \
    -o jsonpath='{.spec.template.spec.containers[0].image}') || return
  helper=$("${k[@]}" -n local-path-storage get configmap local-path-config -o jsonpath='{.data.helperPod\.yaml}' |
    sed -n -E 's/^ *image: *"?([^" ]+)"? *$/\1/p' | head -n 1) || return
  if [ -z "${provisioner}" ] || [ -z "${helper}" ]; then
    log "kind's local-path-provisioner (namespace local-path-storage) names no provisioner or helper image"
    return 1
  fi
  sed -e "s#image: PROVISIONER_IMAGE\$#image: ${provisioner}#" -e "s#image: HELPER_IMAGE\$#image: ${helper}#" \
    "${here}/shared-storage.yaml" |
    "${k[@]}" apply --server-side --field-manager=vmbench-cluster-up -f - >/dev/null || return
  "${k[@]}" -n vmbench-shared-storage rollout status deployment/shared-host-path --timeout=180s
}

if step "online: ${online_image}" online; then
  image=${online_image} cni=kindnet
else
  log "offline: building the node image from the Go module proxy and Debian packages"
  "${here}/node-image.sh"
  image=${NODE_IMAGE} cni=flannel
fi
kubectl=$(kind_kubectl)

write_kubeconfig() {
  mkdir -p "$(dirname "${kubeconfig}")"
  "${kind}" get kubeconfig --name "${CLUSTER_NAME}" > "${kubeconfig}"
}

# api_ready SECONDS: the API server answers /readyz within SECONDS.
api_ready() {
  local deadline=$((SECONDS + $1))
  until "${kubectl}" --kubeconfig "${kubeconfig}" get --raw /readyz >/dev/null 2>&1; do
    [ "${SECONDS}" -lt "${deadline}" ] || return 1
    sleep 2
  done
}

# revive: an existing cluster's node containers are started (after a reboot or a dockerd restart
# they may be stopped, or still starting) and its API server is waited for. A cluster whose API
# server does not answer within 3 minutes is deleted, so that it is made again.
revive() {
  local node stopped
  for node in $("${kind}" get nodes --name "${CLUSTER_NAME}"); do
    [ "$(docker inspect -f '{{.State.Running}}' "${node}" 2>/dev/null)" = true ] && continue
    stopped="${stopped:-} ${node}"
  done
  if [ -n "${stopped:-}" ]; then
    log "starting stopped nodes:${stopped}"
    # shellcheck disable=SC2086 # one argument per node name
    docker start ${stopped} >/dev/null || return
  fi
  write_kubeconfig || return
  api_ready 180 && return
  log "cluster ${CLUSTER_NAME}: API server did not answer /readyz within 180s; deleting it to make it again"
  "${kind}" delete cluster --name "${CLUSTER_NAME}"
  return 1
}

create_once() {
  if "${kind}" get clusters 2>/dev/null | grep -qx "${CLUSTER_NAME}" && revive; then
    log "cluster ${CLUSTER_NAME} exists and answers: keeping it"
  else
    step "kind create cluster ${CLUSTER_NAME} (${image})" create "${image}"
  fi
}

kind_config "${cni}"
with_lock "cluster-${CLUSTER_NAME}" create_once
write_kubeconfig
step "API server ready" api_ready 180
[ "${cni}" = flannel ] && step "flannel ${FLANNEL_VERSION}" flannel
step "containerd: unprivileged ICMP, registry hosts" containerd_config
"${here}/registry.sh"
"${here}/registry.sh" nodes
step "wait for nodes and system pods" wait_ready "${cni}"
step "storage class vmbench-shared (ReadWriteMany)" shared_storage
log "cluster ${CLUSTER_NAME} is up ($((SECONDS - start))s); kubectl --kubeconfig ${kubeconfig}"
