#!/usr/bin/env bash
# Builds every container image the offline kind cluster runs, FROM the local Debian base and tagged
# exactly as kubeadm v1.36 and kind v0.33 ask for them, then packs the kubernetes tarball that
# `kind build node-image --type file` takes: kubernetes/version, kubeadm/kubelet/kubectl, and the four
# image archives kind reads (the add-on images ride in kube-proxy.tar, since kind pulls any required
# image it does not find in those archives). Flannel's two images are only built here: cluster-up
# loads them with `kind load`. Output: bin/kind/kubernetes-v<version>.tar.gz. Cached on binaries'
# content and base image ID.
# Usage: hack/kind/images.sh [SUITE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

suite=${1:-bookworm}
debian="vmbench/debian:${suite}"
k8s_base="vmbench/k8s-base:${suite}"
server="${BIN}/k8s-server/v${K8S_VERSION}"
addons="${BIN}/addons"
tarball="${BIN}/kind/kubernetes-v${K8S_VERSION}.tar.gz"
work="${BIN}/.build/kind-images"

cp_images=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
addon_images=("registry.k8s.io/etcd:${ETCD_VERSION}-0" "registry.k8s.io/coredns/coredns:${COREDNS_VERSION}"
  "registry.k8s.io/pause:${PAUSE_VERSION}" "${SANDBOX_IMAGE}" "${KINDNETD_IMAGE}"
  "${LOCAL_PATH_PROVISIONER_IMAGE}" "${LOCAL_PATH_HELPER_IMAGE}")
FLANNEL_IMAGE="vmbench/flannel:${FLANNEL_VERSION}"
FLANNEL_CNI_IMAGE="vmbench/flannel-cni-plugin:${FLANNEL_CNI_VERSION}"

# docker_build TAGS DOCKERFILE [FILE...]: builds a Dockerfile given as text, with FILEs in its context.
docker_build() {
  local tags=$1 dockerfile=$2 ctx t args=()
  shift 2
  ctx=$(mktemp -d "${work}/ctx-XXXXXX") || return
  printf '%s\n' "${dockerfile}" > "${ctx}/Dockerfile" && { [ $# -eq 0 ] || cp "$@" "${ctx}/"; } || return
  for t in ${tags}; do args+=(-t "${t}"); done
  DOCKER_BUILDKIT=0 docker build --label "${KIND_IMAGE_LABEL}" "${args[@]}" "${ctx}" >"${ctx}/build.log" 2>&1 ||
    { tail -n 20 "${ctx}/build.log" >&2; return 1; }
  rm -rf "${ctx}"
}

# binary_image TAGS FROM BINARY PATH: an image holding BINARY at PATH, which is its entrypoint.
binary_image() {
  docker_build "$1" "FROM $2
COPY $(basename "$3") $4
ENTRYPOINT [\"$4\"]" "$3"
}

build_images() {
  mkdir -p "${work}" || return
  # What kube-proxy, flannel and the control plane expect to find in an image's PATH.
  docker_build "${k8s_base}" "FROM ${debian}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \\
    iptables nftables conntrack ipset iproute2 ca-certificates >/dev/null \\
  && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log" || return
  local c
  for c in "${cp_images[@]}"; do
    binary_image "registry.k8s.io/${c}:v${K8S_VERSION}" "${k8s_base}" "${server}/${c}" "/usr/local/bin/${c}" || return
  done
  binary_image "${addon_images[0]}" "${k8s_base}" "${addons}/etcd-v${ETCD_VERSION}/etcd" /usr/local/bin/etcd &&
    binary_image "${addon_images[1]}" "${k8s_base}" "${addons}/coredns-${COREDNS_VERSION}/coredns" /coredns &&
    docker_build "${addon_images[2]} ${addon_images[3]}" "FROM scratch
COPY pause /pause
USER 65535:65535
ENTRYPOINT [\"/pause\"]" "${addons}/pause-${PAUSE_VERSION}/pause" &&
    binary_image "${LOCAL_PATH_PROVISIONER_IMAGE}" "${k8s_base}" \
      "${addons}/local-path-provisioner-${LOCAL_PATH_VERSION}/local-path-provisioner" /usr/local/bin/local-path-provisioner &&
    docker tag "${debian}" "${LOCAL_PATH_HELPER_IMAGE}" || return
  # kind's node-image build insists on its kindnetd image; vmbench clusters run flannel instead
  # (disableDefaultCNI), so a stub that says so and fails takes the name.
  docker_build "${KINDNETD_IMAGE}" "FROM ${k8s_base}
ENTRYPOINT [\"/bin/sh\", \"-c\", \"echo 'kindnetd is not built offline: vmbench clusters run flannel (disableDefaultCNI: true)' >&2; exit 1\"]" &&
    binary_image "${FLANNEL_IMAGE}" "${k8s_base}" "${addons}/flanneld-${FLANNEL_VERSION}/flanneld" /opt/bin/flanneld &&
    binary_image "${FLANNEL_CNI_IMAGE}" "${k8s_base}" "${addons}/flannel-${FLANNEL_CNI_VERSION}/flannel" /flannel
}

# save_archive OUT IMAGE...: a docker save archive that kind reads right: kind takes the tags from the
# first `repositories` or `manifest.json` member (and only manifest entry [0]), and compares them with
# fully qualified names. So `repositories` goes first, with docker.io/ spelled out.
save_archive() {
  local out=$1 dir
  shift
  dir=$(mktemp -d "${work}/save-XXXXXX") || return
  docker save "$@" | tar -C "${dir}" -x || return
  local q='def q: if (split("/") | length > 1) and (split("/")[0] | test("[.:]|^localhost$")) then . else "docker.io/" + . end;'
  jq -c "${q} with_entries(.key |= q)" "${dir}/repositories" > "${dir}/repositories.new" &&
    jq -c "${q} map(.RepoTags |= map(q))" "${dir}/manifest.json" > "${dir}/manifest.json.new" &&
    mv "${dir}/repositories.new" "${dir}/repositories" && mv "${dir}/manifest.json.new" "${dir}/manifest.json" || return
  (cd "${dir}" && find . -mindepth 1 -maxdepth 1 ! -name repositories ! -name manifest.json -printf '%P\n' |
    tar -cf "${out}" repositories manifest.json -T -) || return
  rm -rf "${dir}"
}

pack() {
  local stage="${work}/tarball" bin c
  bin="${stage}/kubernetes/server/bin"
  rm -rf "${stage}" && mkdir -p "${bin}" "$(dirname "${tarball}")" || return
  echo "v${K8S_VERSION}" > "${stage}/kubernetes/version"
  for c in kubeadm kubelet kubectl; do ln -f "${server}/${c}" "${bin}/${c}" || return; done
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    save_archive "${bin}/${c}.tar" "registry.k8s.io/${c}:v${K8S_VERSION}" || return
  done
  save_archive "${bin}/kube-proxy.tar" "registry.k8s.io/kube-proxy:v${K8S_VERSION}" "${addon_images[@]}" || return
  apt_ensure pigz || return
  tar -C "${stage}" -c kubernetes | pigz -1 > "${tarball}.tmp" && mv "${tarball}.tmp" "${tarball}" || return
  rm -rf "${stage}"
}

"${here}/../images/debian-base.sh" "${suite}"
all_images=("${cp_images[@]/#/registry.k8s.io/}")
all_images=("${all_images[@]/%/:v${K8S_VERSION}}" "${addon_images[@]}" "${FLANNEL_IMAGE}" "${FLANNEL_CNI_IMAGE}")
inputs=$(inputs_hash "${server}" "${addons}" "$(docker image inspect -f '{{.Id}}' "${debian}")" \
  "$(declare -f docker_build binary_image build_images)" "${all_images[*]}")
for i in "${all_images[@]}" "${k8s_base}"; do image_exists "${i}" || rm -f "${BIN}/stamps/kind-images"; done
cached_step "kind-images" "${inputs}" build_images
prune_replaced_images

[ -f "${tarball}" ] || rm -f "${BIN}/stamps/kind-tarball"
cached_step "kind-tarball" "$(inputs_hash "${inputs}" "$(declare -f save_archive pack)" \
  "$(docker image inspect -f '{{.Id}}' "${all_images[@]}")")" pack
