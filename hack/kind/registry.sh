#!/usr/bin/env bash
# The OCI registry beside the kind cluster, through which the nodes get vmbench's images as a real
# cluster does: pushed by the host, pulled by each node's containerd. The registry is
# github.com/distribution/distribution/v3 at REGISTRY_VERSION, built from the Go module proxy (so
# the same online and offline; see build_binary) into bin/tools/, in the image
# vmbench/registry:<version> on the local Debian base (images/registry). It runs as the docker
# container vmbench-registry on kind's network (restart policy unless-stopped), published on
# 127.0.0.1:5001 for the host's pushes, its blobs in the docker volume vmbench-registry, which
# outlives the container: a push of an image the registry already holds sends no layer.
# Images are named localhost:5001/...; each node's containerd resolves that name to
# http://vmbench-registry:5000 (a hosts.toml under its config_path, which hack/kind/cluster-up.sh
# sets in config.toml).
# Usage: hack/kind/registry.sh              build the registry if needed and run it (kept when current)
#        hack/kind/registry.sh build        build its binary and image only
#        hack/kind/registry.sh nodes        point every node of the cluster at it (no containerd restart)
#        hack/kind/registry.sh prune TAG    keep only TAG of the vmbench-* images, delete unused blobs
#        hack/kind/registry.sh down         remove the container and its image; --purge also the volume
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

module=github.com/distribution/distribution/v3
binary="${BIN}/tools/registry-${REGISTRY_VERSION}"
image="vmbench/registry:${REGISTRY_VERSION}"

# build_binary: the registry at REGISTRY_VERSION with the file system storage driver, the only one
# images/registry/config.yml uses. Upstream's cmd/registry also links the S3, Azure and GCS drivers,
# whose SDKs make 845 packages to compile; a main of our own that imports the registry and that
# driver alone makes 423 (a cold build: 2.7 CPU minutes). Version stamps as in upstream's Makefile.
build_binary() {
  local work="${BIN}/.build/registry-${REGISTRY_VERSION}" ldflags="-s -w"
  ldflags+=" -X ${module}/version.version=${REGISTRY_VERSION} -X ${module}/version.mainpkg=${module}"
  rm -rf "${work}" && mkdir -p "${work}" "${BIN}/tools" || return
  cat >"${work}/main.go" <<'EOF'
// Command registry is distribution's registry with the file system storage driver only.
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() { _ = registry.RootCmd.Execute() }
EOF
  (cd "${work}" && go mod init vmbench.local/registry-build 2>/dev/null &&
    go get "${module}/registry@${REGISTRY_VERSION}" "${module}/registry/storage/driver/filesystem@${REGISTRY_VERSION}" \
      >"${work}.log" 2>&1 &&
    CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${binary}" .) || { tail -n 20 "${work}.log" >&2; return 1; }
  rm -f "${work}.log"
  rm -rf "${work}"
}

build_image() {
  local ctx="${BIN}/.build/registry-image"
  rm -rf "${ctx}" && mkdir -p "${ctx}" &&
    cp "${ROOT}/images/registry/Dockerfile" "${ROOT}/images/registry/config.yml" "${ctx}/" &&
    cp "${binary}" "${ctx}/registry" &&
    docker build -q --label "${KIND_IMAGE_LABEL}" --build-arg BASE_IMAGE=vmbench/debian:bookworm -t "${image}" "${ctx}" >/dev/null &&
    rm -rf "${ctx}"
}

# answers SECONDS: the registry's API answers on the host's port within SECONDS.
answers() {
  local deadline=$((SECONDS + $1))
  until curl -fsS -o /dev/null "http://127.0.0.1:${REGISTRY_PORT}/v2/" 2>/dev/null; do
    [ "${SECONDS}" -lt "${deadline}" ] || return 1
    sleep 1
  done
}

# run: a container of the current image, running; one of an older image is replaced (the volume
# and its blobs stay).
run() {
  local want have running
  want=$(docker image inspect -f '{{.Id}}' "${image}") || return
  have=$(docker inspect -f '{{.Image}}' "${REGISTRY_NAME}" 2>/dev/null || true)
  if [ -n "${have}" ] && [ "${have}" != "${want}" ]; then
    log "${REGISTRY_NAME} runs another image: replacing the container (its volume stays)"
    docker rm -f "${REGISTRY_NAME}" >/dev/null || return
    have=""
  fi
  if [ -z "${have}" ]; then
    docker network inspect kind >/dev/null 2>&1 ||
      { log "no docker network 'kind': make the cluster first (hack/kind/cluster-up.sh)"; return 1; }
    docker run -d --name "${REGISTRY_NAME}" --restart unless-stopped --network kind \
      -p "127.0.0.1:${REGISTRY_PORT}:5000" -v "${REGISTRY_NAME}:/var/lib/registry" \
      --label "${KIND_IMAGE_LABEL}" "${image}" >/dev/null || return
  else
    running=$(docker inspect -f '{{.State.Running}}' "${REGISTRY_NAME}")
    [ "${running}" = true ] || docker start "${REGISTRY_NAME}" >/dev/null || return
  fi
  answers 60 || { log "${REGISTRY_NAME} does not answer on 127.0.0.1:${REGISTRY_PORT}"; docker logs --tail 20 "${REGISTRY_NAME}" >&2; return 1; }
}

# build: the registry's binary and image, cached (hack/prebuild.sh makes them ahead of the cluster).
build() {
  "${ROOT}/hack/images/debian-base.sh" bookworm
  [ -x "${binary}" ] || rm -f "${BIN}/stamps/registry-${REGISTRY_VERSION}"
  cached_step "registry-${REGISTRY_VERSION}" \
    "$(inputs_hash "$(go env GOVERSION)" "$(declare -f build_binary)")" build_binary
  image_exists "${image}" || rm -f "${BIN}/stamps/image-registry"
  cached_step "image-registry" "$(inputs_hash "${binary}" "${ROOT}/images/registry" "${image}" \
    "$(docker image inspect -f '{{.Id}}' vmbench/debian:bookworm)")" build_image
  prune_replaced_images
}

up() {
  build
  step "registry ${REGISTRY_NAME} on 127.0.0.1:${REGISTRY_PORT}" run
}

# nodes: every node resolves ${LOCAL_REGISTRY} to the registry over kind's network. containerd reads
# hosts.toml at each pull, so no restart is needed; the config_path it reads them from is set by
# cluster-up.sh.
nodes() {
  local kind node dir
  kind=$("${here}/kind-cli.sh")
  for node in $("${kind}" get nodes --name "${CLUSTER_NAME}"); do
    dir=$(docker exec "${node}" sed -n 's/^ *config_path *= *"\(.*\)" *$/\1/p' /etc/containerd/config.toml | head -n 1)
    [ -n "${dir}" ] || { log "${node}: containerd has no registry config_path: run hack/kind/cluster-up.sh"; return 1; }
    docker exec -i "${node}" sh -c "mkdir -p '${dir}/${LOCAL_REGISTRY}' && cat > '${dir}/${LOCAL_REGISTRY}/hosts.toml'" <<EOF
# Written by hack/kind/registry.sh: images named ${LOCAL_REGISTRY}/... come from the registry
# container beside the cluster.
[host."http://${REGISTRY_NAME}:5000"]
  capabilities = ["pull", "resolve"]
EOF
  done
}

# prune TAG: the vmbench-* repositories keep only TAG, and the blobs nothing else refers to go, so
# that the volume does not grow by a VM disk at each rebuild. Deleting a tag is removing its
# directory in the registry's storage, which is what the registry's own tag deletion does; the
# garbage collector then deletes the manifests no tag names and their blobs. It must not run during
# a push: hack/install.sh holds the lock "registry-push" around both.
prune() {
  local keep=$1
  [[ "${keep}" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ ]] || { log "prune: no tag to keep"; return 2; }
  # shellcheck disable=SC2016 # expanded in the container
  docker exec "${REGISTRY_NAME}" sh -c 'for tags in /var/lib/registry/docker/registry/v2/repositories/vmbench-*/_manifests/tags; do
      [ -d "${tags}/$1" ] || continue
      for t in "${tags}"/*; do [ "${t##*/}" = "$1" ] || rm -rf "${t}"; done
    done' sh "${keep}" &&
    docker exec "${REGISTRY_NAME}" registry garbage-collect --delete-untagged --quiet /etc/distribution/config.yml >/dev/null &&
    log "registry: $(docker exec "${REGISTRY_NAME}" du -sh /var/lib/registry | cut -f1) after keeping only tag ${keep}"
}

down() {
  docker rm -f "${REGISTRY_NAME}" >/dev/null 2>&1 || true
  [ "${1:-}" != --purge ] || docker volume rm -f "${REGISTRY_NAME}" >/dev/null
  ! image_exists "${image}" || docker rmi "${image}" >/dev/null
  rm -f "${BIN}/stamps/image-registry"
}

case "${1:-up}" in
  up) up ;;
  build) build ;;
  nodes) step "nodes pull ${LOCAL_REGISTRY}/... from ${REGISTRY_NAME}" nodes ;;
  prune) step "registry: prune all but tag ${2:-}" prune "${2:-}" ;;
  down) down "${2:-}" ;;
  *) echo "usage: $0 [up|build|nodes|prune TAG|down [--purge]]" >&2; exit 2 ;;
esac
