#!/usr/bin/env bash
# Shared helpers for the hack/ scripts: timed steps and the source-built Kubernetes wrapper module.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="${ROOT}/bin"
# Build outputs that do not depend on the checkout (Kubernetes, add-on and KubeVirt binaries, tools,
# build trees, step stamps) live in a cache beside Go's, so that another clone on the same machine
# (CI's, say) reuses them as it reuses Go's build cache: in a new checkout bin/<dir> links there.
# A checkout whose bin/<dir> is already a real directory keeps it.
CACHE="${VMBENCH_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/vmbench}"
for _dir in stamps locks .build tools k8s k8s-server addons setup-envtest kind mpi-operator-0.6.0 kubevirt-v1.7.0 vm-disk; do
  [ -e "${BIN}/${_dir}" ] || [ -L "${BIN}/${_dir}" ] ||
    { mkdir -p "${CACHE}/${_dir}" "${BIN}" && ln -s "${CACHE}/${_dir}" "${BIN}/${_dir}"; }
done
unset _dir
K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.8}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# step NAME CMD...: runs CMD, then says how long it took.
step() {
  local name=$1 start=$SECONDS
  shift
  log "==> ${name}"
  local rc=0
  "$@" || rc=$?
  if [ "${rc}" -ne 0 ]; then
    log "<== ${name} failed with exit code ${rc} ($((SECONDS - start))s)"
    return "${rc}"
  fi
  log "<== ${name} ($((SECONDS - start))s)"
}

# k8s_wrapper_module DIR: writes a Go module in DIR that builds k8s.io/kubernetes commands at
# K8S_VERSION. The kubernetes module zip has no staging sources, so every staging replace of its
# go.mod is pointed at the published k8s.io/<name> v0.<minor>.<patch> module instead.
k8s_wrapper_module() {
  local dir=$1 gomod staging
  mkdir -p "${dir}"
  gomod=$(cd "${dir}" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -n "${gomod}" ] || { log "cannot download k8s.io/kubernetes@v${K8S_VERSION}"; return 1; }
  staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "${gomod}")
  {
    echo "module vmbench.local/k8s-build"
    echo
    echo "go $(sed -n 's/^go //p' "${gomod}")"
    echo
    echo "require k8s.io/kubernetes v${K8S_VERSION}"
    echo
    for m in ${staging}; do echo "replace ${m} => ${m} v0.${K8S_VERSION#*.}"; done
  } > "${dir}/go.mod"
}

# k8s_ldflags: version stamps, without which kubeadm and the apiserver report v0.0.0.
k8s_ldflags() {
  local minor=${K8S_VERSION#*.}
  minor=${minor%%.*}
  local flags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=v${K8S_VERSION} -X ${pkg}.gitMajor=${K8S_VERSION%%.*}"
    flags+=" -X ${pkg}.gitMinor=${minor} -X ${pkg}.gitTreeState=clean"
  done
  echo "${flags}"
}

# --- Cached steps and machine checks for hack/images and hack/kind ---

# inputs_hash ARG...: a short hash of the strings given; absolute paths of files and directories are
# read by content.
inputs_hash() {
  local a
  for a in "$@"; do
    if [[ "${a}" == /* ]] && [ -d "${a}" ]; then
      (cd "${a}" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    elif [[ "${a}" == /* ]] && [ -f "${a}" ]; then
      sha256sum < "${a}"
    else
      printf '%s\n' "${a}"
    fi
  done | sha256sum | cut -c1-16
}

# with_lock NAME CMD...: runs CMD while holding bin/locks/NAME, so that two scripts sharing this
# machine (and bin/) never build the same thing at the same time.
with_lock() {
  local name=$1 fd rc=0
  shift
  mkdir -p "${BIN}/locks" || return
  exec {fd}>"${BIN}/locks/${name}"
  flock -n "${fd}" || { log "waiting for another run of ${name}"; flock "${fd}"; }
  "$@" || rc=$?
  exec {fd}>&-
  return "${rc}"
}

# cached_step NAME HASH CMD...: runs `step NAME CMD...` unless it already succeeded with inputs
# HASH. The stamp lives in bin/stamps; delete it (or pass different inputs) to force a rebuild.
# Beware: CMD runs in an `||` context, where `set -e` does not apply: chain its commands with &&.
cached_step() {
  local name
  name=$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_')
  with_lock "${name}" _cached_step "$@"
}

_cached_step() {
  local name=$1 hash=$2 stamp
  shift 2
  stamp="${BIN}/stamps/$(printf '%s' "${name}" | tr -c 'A-Za-z0-9._-' '_')"
  if [ "$(cat "${stamp}" 2>/dev/null)" = "${hash}" ]; then
    log "=== ${name}: up to date (${hash})"
    return 0
  fi
  step "${name}" "$@" || return
  mkdir -p "${BIN}/stamps"
  echo "${hash}" > "${stamp}"
}

# apt_ensure PKG...: installs the Debian packages that are missing.
apt_ensure() {
  local missing=() p
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "${p}" 2>/dev/null)" = "install ok installed" ] || missing+=("${p}")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  # Stale or missing package lists: update once and try again.
  # Another apt on the machine holds dpkg's lock for a while: wait for it rather than fail.
  local wait=(-o DPkg::Lock::Timeout=600)
  compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get "${wait[@]}" update -qq && DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

# lacks_sys_resource: true where this process's bounding set has no CAP_SYS_RESOURCE (capability
# 24), so that privileged containers need the runc wrapper (hack/docker/runc-wrapper.sh).
lacks_sys_resource() {
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  ! (( (16#${bnd} >> 24) & 1 ))
}

# debian_mirror: the Debian mirror this machine's own apt uses, unless DEBIAN_MIRROR names another,
# so that every image and the VM disk come from one archive.
debian_mirror() {
  local f files=() mirror=${DEBIAN_MIRROR:-}
  if [ -z "${mirror}" ]; then
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do [ -f "${f}" ] && files+=("${f}"); done
    [ "${#files[@]}" -eq 0 ] || mirror=$(sed -n -E 's#^URIs: *(\S+/debian)/?$#\1#p; s#^deb +(\[[^]]*\] +)?(\S+/debian)/? .*#\2#p' "${files[@]}" | head -n 1)
  fi
  [ -n "${mirror}" ] || { log "no Debian mirror in this machine's apt sources: set DEBIAN_MIRROR"; return 1; }
  echo "${mirror}"
}

# image_exists NAME: true when the local Docker engine has the image NAME.
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
