#!/usr/bin/env bash
# Builds, ahead of the kind cluster, what the e2e and the lint need and no cluster has to exist for:
# the offline node image and its parts, the registry, vmbench's images and VM disk, the MPI
# Operator's, KubeVirt's, SeaweedFS's and Prometheus' images, golangci-lint and crd-ref-docs, the e2e's
# test binary and golangci-lint's cache. Every image step is the cached step the cluster and install
# scripts run themselves (bin/stamps, bin/locks), so they find it done and nothing is built twice.
# make test starts it in the background while the unit and envtest tests run, which leave CPU idle
# while they download modules and wait on envtest's API server; at nice 19 the builds take mostly
# that. The e2e waits for its images only; the lint tools go on beside it.
# Usage: hack/prebuild.sh               build in the foreground
#        hack/prebuild.sh --background  start dockerd here, then build at nice 19 (log: bin/prebuild.log)
#        hack/prebuild.sh --wait-e2e    wait until the background build has built what the e2e needs
#        hack/prebuild.sh --wait        wait for the background build's end; say how it ended
#        hack/prebuild.sh --stop        stop the background build
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/lib.sh"
source "${here}/kind/env.sh"

log_file="${BIN}/prebuild.log"
pid_file="${BIN}/prebuild.pid"
rc_file="${BIN}/prebuild.rc"
e2e_file="${BIN}/prebuild.e2e"

# build_e2e: what the cluster and install scripts and the e2e's go test need.
build_e2e() {
  # The Debian base and the VM disk's root file system first (debootstrap: mostly downloads), then the
  # Go builds, the Kubernetes server binaries late (the envtest binaries the tests build share their
  # packages through Go's build cache).
  "${ROOT}/hack/images/debian-base.sh" bookworm
  "${ROOT}/hack/images/vm-disk.sh"
  "${ROOT}/hack/images/vmbench.sh" manager runner
  "${ROOT}/hack/images/mpi-operator.sh"
  "${ROOT}/hack/images/kubevirt.sh"
  "${ROOT}/hack/kind/registry.sh" build
  "${ROOT}/hack/images/prometheus.sh"
  "${here}/kind/kind-cli.sh" >/dev/null
  kind_node_online "kindest/node:v${K8S_VERSION}" || "${here}/kind/node-image.sh"
  "${ROOT}/hack/images/seaweedfs.sh"
  "${ROOT}/hack/helm.sh" >/dev/null
  # The e2e's test binary, into Go's build cache.
  (cd "${ROOT}" && go test -tags 'e2e chaos' -c -o /dev/null ./test/e2e/)
}

# build_lint: make verify's and make lint's tools, and golangci-lint's analysis into its cache (later
# runs reuse what is unchanged; findings are make lint's to report, not this warm-up's). Needed only
# after every test, so make test lets it go on while the e2e runs.
build_lint() {
  make -C "${ROOT}" --no-print-directory lint-tools
  make -C "${ROOT}" --no-print-directory lint >/dev/null 2>&1 || true
}

# running: the pid in bin/prebuild.pid is alive and is this script (not a later process that got the pid).
running() {
  local pid
  pid=$(cat "${pid_file}" 2>/dev/null) && [ -n "${pid}" ] && tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -q 'prebuild.sh --run'
}

# failed: what to say when the background build ended without building what is waited for. Each
# script runs again in the foreground, where its error ends the run with its own message.
failed() {
  log "the background build ended with exit code $(cat "${rc_file}" 2>/dev/null || echo "unknown: it was stopped");" \
    "its last lines (${log_file}):"
  tail -n 15 "${log_file}" >&2 || true
  log "what is missing is built in the foreground"
}

case "${1:-}" in
  "")
    "${ROOT}/hack/docker-up.sh"
    build_e2e
    build_lint
    ;;
  --run)
    # The background process itself: bin/prebuild.e2e once the e2e's part is built (--wait-e2e), its
    # exit code in bin/prebuild.rc (--wait).
    trap 'echo $? > "${rc_file}"' EXIT
    # setsid made this a session of its own, and where the kernel groups each session's processes
    # (sched_autogroup_enabled) the group shares the CPU as one process of its group's nice value,
    # whatever the nice values inside it: 19 for the group too, or the builds take half the CPU
    # from the tests (SeaweedFS's build 407 s instead of 235 s in a cold make test, 2026-11-30).
    [ ! -w /proc/self/autogroup ] || echo 19 > /proc/self/autogroup 2>/dev/null || true
    build_e2e
    touch "${e2e_file}"
    build_lint
    ;;
  --background)
    ! running || { log "a background build already runs (pid $(cat "${pid_file}"), log ${log_file})"; exit 0; }
    # dockerd starts at this priority: the cluster's nodes and VMs run in it later. Without an engine
    # nothing is built ahead, and the unit tests still run; the e2e's cluster-up says what is missing.
    "${ROOT}/hack/docker-up.sh" || { log "no Docker engine: nothing is built ahead of the e2e"; exit 0; }
    mkdir -p "${BIN}"
    rm -f "${rc_file}" "${e2e_file}"
    # The idle I/O class too, where the disk's I/O scheduler honours it (BFQ; envtest's etcd syncs to the same disk).
    idle_io=()
    ! command -v ionice >/dev/null || idle_io=(ionice -c 3)
    nice -n 19 "${idle_io[@]}" setsid "$0" --run >"${log_file}" 2>&1 </dev/null &
    echo $! > "${pid_file}"
    log "building the kind e2e's images, then the lint tools, in the background at nice 19 (pid $!, log ${log_file})"
    ;;
  --wait-e2e)
    [ -f "${pid_file}" ] || exit 0
    if running && [ ! -f "${e2e_file}" ]; then
      log "waiting for the background build of the e2e's images (log ${log_file})"
      while running && [ ! -f "${e2e_file}" ]; do sleep 2; done
    fi
    if [ -f "${e2e_file}" ]; then
      log "the e2e's images are built ($(grep -c '<== ' "${log_file}" || true) steps run, the rest up to date)$(! running ||
        echo "; the lint tools go on in the background")"
    else
      failed
    fi
    ;;
  --wait)
    [ -f "${pid_file}" ] || exit 0
    if running; then
      log "waiting for the background build (log ${log_file})"
      while running; do sleep 2; done
    fi
    rm -f "${pid_file}"
    if [ "$(cat "${rc_file}" 2>/dev/null)" = 0 ]; then
      log "the background build is done ($(grep -c '<== ' "${log_file}" || true) steps run, the rest up to date)"
    else
      failed
    fi
    ;;
  --stop)
    if running; then
      kill -- "-$(cat "${pid_file}")" 2>/dev/null || true
      log "stopped the background build (log ${log_file})"
    fi
    rm -f "${pid_file}"
    ;;
  *)
    echo "usage: $0 [--background|--wait-e2e|--wait|--stop]" >&2
    exit 2
    ;;
esac
