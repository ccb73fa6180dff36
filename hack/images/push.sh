#!/usr/bin/env bash
# Builds vmbench's three images and pushes them to a registry that a cluster pulls from: the manager
# and the runner (hack/images/vmbench.sh) and the VM disk, a KubeVirt containerDisk
# (hack/images/vm-disk.sh), as REGISTRY/vmbench-manager:TAG, REGISTRY/vmbench-runner:TAG and
# REGISTRY/vmbench-vm-disk:TAG: the names the chart makes of global.registry and global.tag.
# Without TAG the tag is derived from the three images' content (their IDs), so that a rebuilt image
# gets a new tag and an unchanged one keeps its tag: pull policy IfNotPresent stays right.
# Prints each pushed image as REFERENCE@DIGEST on stdout, one a line; progress goes to stderr.
# Pushing needs `docker login REGISTRY` first where the registry asks for credentials.
# Usage: hack/images/push.sh REGISTRY [TAG]      e.g. hack/images/push.sh registry.example.com/perf v0.1.0
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

usage="usage: $0 REGISTRY [TAG], e.g. $0 registry.example.com/perf v0.1.0"
registry=${1:-}
tag=${2:-}
[ -n "${registry}" ] || { log "no registry given; ${usage}"; exit 2; }
registry=${registry%/}
[[ "${registry}" != *://* ]] || { log "registry ${registry}: give host[:port][/path], without ${registry%%://*}://"; exit 2; }
[[ "${registry}" =~ ^[a-zA-Z0-9][a-zA-Z0-9.-]*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$ ]] ||
  { log "registry ${registry} is no registry host[:port][/path] (paths are lower case); ${usage}"; exit 2; }
[ -z "${tag}" ] || [[ "${tag}" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] ||
  { log "tag ${tag}: use letters, digits, '_', '.' and '-' (up to 128, not starting with '.' or '-')"; exit 2; }

local_tag=${VMBENCH_TAG:-dev}
names=(manager runner vm-disk)
"${ROOT}/hack/images/vmbench.sh" manager runner
"${ROOT}/hack/images/vm-disk.sh"

if [ -z "${tag}" ]; then
  tag=$(for name in "${names[@]}"; do docker image inspect -f '{{.Id}}' "vmbench/${name}:${local_tag}"; done | sha256sum | cut -c1-12)
  log "tag ${tag}, derived from the images' IDs"
fi

# push REF: docker push, its output kept for the digest and shown only when it fails.
push_log=$(mktemp)
trap 'rm -f "${push_log}"' EXIT
push() { docker push "$1" >"${push_log}" 2>&1 || { cat "${push_log}" >&2; return 1; }; }

for name in "${names[@]}"; do
  ref="${registry}/vmbench-${name}:${tag}"
  docker tag "vmbench/${name}:${local_tag}" "${ref}"
  size=$(docker image inspect -f '{{.Size}}' "${ref}" | numfmt --to=iec)
  step "push ${ref} (${size})" push "${ref}"
  digest=$(sed -n 's/.*digest: \(sha256:[0-9a-f]\{64\}\).*/\1/p' "${push_log}" | tail -n 1)
  [ -n "${digest}" ] || { log "docker push ${ref} printed no digest:"; cat "${push_log}" >&2; exit 1; }
  # The local engine keeps the image as vmbench/<name>:<local tag>; a tag per push would keep every
  # older image alive.
  docker rmi "${ref}" >/dev/null
  echo "${ref}@${digest}"
done
log "install with: helm install vmbench charts/vmbench -n vmbench-system --create-namespace --set global.registry=${registry} --set global.tag=${tag}"
