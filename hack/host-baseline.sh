#!/usr/bin/env bash
# The bare figure that containers and VMs cost against: runs a suite's benchmarks on this machine,
# outside Kubernetes, with the same tools (Debian's packages, as in the runner image and the VM disk),
# the same runner and the same parsers (`vmbench host`). Given a saved suite with results (the e2e
# keeps one in bin/e2e/quick.yaml), it also prints each platform's mean and its ratio to this machine.
# It installs the tools on this machine, adding Debian's non-free component for iozone3 and netperf
# where the apt sources lack it.
# Usage: hack/host-baseline.sh [SUITE.yaml] [vmbench host arguments...]
#        (default: bin/e2e/quick.yaml when the e2e left one, else config/samples/suite-quick.yaml)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/lib.sh"

suite=${1:-}
[ "$#" -gt 0 ] && shift
if [ -z "${suite}" ]; then
  suite="${ROOT}/config/samples/suite-quick.yaml"
  [ -f "${BIN}/e2e/quick.yaml" ] && suite="${BIN}/e2e/quick.yaml"
fi

# non_free adds Debian's non-free component beside the machine's own sources, with the same
# Signed-By (apt refuses one source with two keys).
non_free() {
  local mirror key policy
  # Read whole first: grep -q would end the pipe early, which pipefail counts as a failure.
  policy=$(apt-cache policy iozone3 2>/dev/null)
  grep -q 'Candidate: [0-9]' <<<"${policy}" && return 0
  mirror=$(debian_mirror) || return
  key=$(sed -n 's/^Signed-By: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  log "adding ${mirror} bookworm non-free to apt's sources, for iozone3 and netperf"
  printf 'deb %s%s bookworm non-free\n' "${key:+[signed-by=${key}] }" "${mirror}" > /etc/apt/sources.list.d/vmbench-non-free.list
  apt-get update -qq
}

step "non-free for iozone3 and netperf" non_free
step "benchmark tools" apt_ensure openmpi-bin libopenblas0-pthread hpcc sysbench stress-ng iozone3 iperf3 netperf netcat-openbsd fio iputils-ping procps
step "build vmbench" env CGO_ENABLED=0 go build -o "${BIN}/vmbench" "${ROOT}/cmd/vmbench"
log "running ${suite} on this machine"
"${BIN}/vmbench" host -f "${suite}" "$@"
