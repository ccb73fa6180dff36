#!/usr/bin/env bash
# make demo: cluster up (with its registry), images built and pushed, MPI Operator and vmbench
# installed, the sample suite (config/samples/suite-quick.yaml) run, and its comparison printed with
# the manager's own CPU and memory while it ran. Every step says what it does and how long it took.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/lib.sh"
source "${here}/kind/env.sh"

start=${SECONDS}
suite=${DEMO_SUITE:-quick}
sample="${ROOT}/config/samples/suite-${suite}.yaml"
export KUBECONFIG="${BIN}/kind/${CLUSTER_NAME}.kubeconfig"

"${here}/kind/cluster-up.sh"
kubectl=$(kind_kubectl)
"${here}/install.sh"

# DEMO_REPETITIONS overrides the sample's repetitions (under emulation every VM run takes many
# minutes).
apply_suite() {
  "${kubectl}" delete benchmarksuite "${suite}" --ignore-not-found --wait=true >/dev/null
  "${kubectl}" create --dry-run=client -o json -f "${sample}" |
    jq --arg reps "${DEMO_REPETITIONS:-}" 'if $reps == "" then . else .spec.repetitions = ($reps | tonumber) end' |
    "${kubectl}" apply -f -
}

# Waits until the suite ends, printing its progress whenever it changes.
wait_suite() {
  local last="" now phase deadline=$((SECONDS + ${DEMO_TIMEOUT:-3600}))
  while [ "${SECONDS}" -lt "${deadline}" ]; do
    now=$("${kubectl}" get benchmarksuite "${suite}" -o jsonpath='{.status.phase} {.status.progress} {.status.conditions[?(@.type=="Progressing")].message}')
    [ "${now}" != "${last}" ] && log "${suite}: ${now}" && last=${now}
    phase=${now%% *}
    case "${phase}" in Complete | Failed) return 0 ;; esac
    sleep 10
  done
  log "${suite} did not end within ${DEMO_TIMEOUT:-3600}s"
  return 1
}

step "apply BenchmarkSuite ${suite}" apply_suite
step "run ${suite}" wait_suite
"${kubectl}" get benchmarksuite "${suite}"
echo
"${BIN}/vmbench" report "${suite}"
# What the manager itself cost meanwhile: its process_* metrics over the suite's runs, from the
# Prometheus of hack/kind/prometheus.sh through the API server. A missing figure is no reason to fail
# the demo.
echo
"${BIN}/vmbench" footprint "${suite}" || log "no manager footprint (Prometheus in vmbench-monitoring, job vmbench): see the error above"
# The suite as it ended, with the ConfigMaps that keep its whole result tables (iozone auto-mode
# tables, iperf3 time series), so that `vmbench report -f` draws every plot from the file alone.
# DEMO_SAVE=docs/report/quick-suite.yaml refreshes the copy that docs/reports.md quotes.
save=${DEMO_SAVE:-${BIN}/demo/${suite}-suite.yaml}
mkdir -p "$(dirname "${save}")"
{
  "${kubectl}" get benchmarksuite "${suite}" -o yaml
  echo ---
  "${kubectl}" get configmap -l "vmbench.io/suite=${suite},vmbench.io/tables-of" -o yaml
} >"${save}"
log "saved ${suite} and its result tables in ${save} (${BIN}/vmbench report -f ${save} --plots DIR)"
phase=$("${kubectl}" get benchmarksuite "${suite}" -o jsonpath='{.status.phase}')
log "demo finished in $((SECONDS - start))s: suite ${suite} is ${phase}"
[ "${phase}" = Complete ] || {
  "${kubectl}" get benchmarksuite "${suite}" -o jsonpath='{.status.conditions[?(@.type=="Failed")].message}{"\n"}'
  exit 1
}
