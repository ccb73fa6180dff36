#!/usr/bin/env bash
# Live-migrates one VMI booted from vmbench's VM disk N times, one after the other, on the kind cluster,
# and prints for each migration what KubeVirt says (outcome, mode, source and target node, start and
# end from status.migrationState) and what a pinger pod sees: it pings the VMI every 10 ms
# (ping -i 0.01 -D) and, since with masquerade binding the VMI's address is its launcher pod's and
# changes with every migration, starts a second ping at the target pod's address as soon as that pod
# has one. "reply gap" is the first reply at the new address minus the last at the old one; "longest
# gap at the old address" is the longest silence between replies before the switch-over. The
# namespace is deleted at the end unless --keep. Figures and their caveats: docs/migration.md.
# Usage: hack/kind/migration-measure.sh [-n N] [--keep]     (N: 1..20, default 3)
# Needs: the cluster (hack/kind/cluster-up.sh), KubeVirt (hack/kind/kubevirt.sh) and vmbench's images in
# the registry beside the cluster (hack/install.sh pushes them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

count=3 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) count=${2:-}; shift 2 || { echo "usage: $0 [-n N] [--keep]" >&2; exit 2; } ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [-n N] [--keep]" >&2; exit 2 ;;
  esac
done
[[ "${count}" =~ ^[0-9]+$ ]] && [ "${count}" -ge 1 ] && [ "${count}" -le 20 ] ||
  { log "-n ${count}: give a number of migrations from 1 to 20"; exit 2; }

export KUBECONFIG="${KUBECONFIG:-${BIN}/kind/${CLUSTER_NAME}.kubeconfig}"
ns=vmbench-migration-measure
k() { kubectl -n "${ns}" "$@"; }
# until_true SECONDS CMD...: retries CMD every second for up to SECONDS.
until_true() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "${SECONDS}" -lt "${end}" ] || return 1
    sleep 1
  done
}

# The VM disk and runner (for ping) as hack/install.sh pushed them: the newest tag in the registry.
latest_tag() {
  curl -fsS "http://127.0.0.1:${REGISTRY_PORT}/v2/$1/tags/list" | jq -r '.tags // [] | last // empty'
}
disk_tag=$(latest_tag vmbench-vm-disk) runner_tag=$(latest_tag vmbench-runner)
[ -n "${disk_tag}" ] && [ -n "${runner_tag}" ] ||
  { log "no vmbench-vm-disk or vmbench-runner in the registry ${LOCAL_REGISTRY}: run hack/install.sh first"; exit 1; }

setup() {
  kubectl create namespace "${ns}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null &&
    k apply -f - >/dev/null <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: guest}
spec:
  terminationGracePeriodSeconds: 0
  evictionStrategy: LiveMigrate
  domain:
    cpu: {cores: 1}
    memory: {guest: 512Mi}
    resources: {requests: {cpu: 100m}}
    devices:
      disks:
      - {name: disk, disk: {bus: virtio}}
      - {name: cloudinit, disk: {bus: virtio}}
      interfaces: [{name: default, masquerade: {}}]
  networks: [{name: default, pod: {}}]
  volumes:
  - name: disk
    containerDisk: {image: ${LOCAL_REGISTRY}/vmbench-vm-disk:${disk_tag}, imagePullPolicy: IfNotPresent}
  - name: cloudinit
    cloudInitNoCloud:
      userData: |
        #cloud-config
        {}
---
apiVersion: v1
kind: Pod
metadata: {name: pinger}
spec:
  terminationGracePeriodSeconds: 0
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: node-role.kubernetes.io/control-plane, operator: Exists}]}]
  tolerations: [{operator: Exists}]
  containers:
  - name: ping
    image: ${LOCAL_REGISTRY}/vmbench-runner:${runner_tag}
    imagePullPolicy: IfNotPresent
    command: [sleep, infinity]
    securityContext: {runAsUser: 0}
YAML
}

ip_of_vmi() { k get vmi guest -o jsonpath='{.status.interfaces[0].ipAddress}'; }
guest_answers() { k exec pinger -- ping -c 1 -W 1 "$(ip_of_vmi)" >/dev/null 2>&1; }
wait_guest() {
  k wait vmi/guest --for=condition=LiveMigratable --timeout=600s >/dev/null &&
    k wait pod/pinger --for=condition=Ready --timeout=300s >/dev/null &&
    until_true 600 guest_answers
}

# start_ping ADDR: pings ADDR every 10 ms into /tmp/ping-ADDR.log in the pinger pod.
start_ping() { k exec pinger -- sh -c "nohup ping -i 0.01 -D -W 1 $1 > /tmp/ping-$1.log 2>&1 &"; }
stop_ping() { k exec pinger -- sh -c "for p in \$(pgrep -f 'ping -i 0.01 -D -W 1 $1\$'); do kill -INT \$p; done"; }
# replies ADDR [TTL]: the times (seconds since the epoch) of the replies at ADDR with TTL (default: the
# guest's, guest_ttl), one a line. A launcher pod's own kernel answers at its address too: the target
# pod before its NAT to the guest is in place, the source pod after it is gone; those replies come one
# hop nearer (TTL one higher: 62 against the guest's 61 on kind, 2026-11-29) and are not the guest's.
replies() {
  k exec pinger -- sed -n "s/^\[\([0-9.]*\)\] .* bytes from .* ttl=${2:-${guest_ttl}} .*/\1/p" "/tmp/ping-$1.log"
}
has_replies() { [ -n "$(replies "$1" | head -n 1)" ]; }
# first_ttl ADDR: the TTL of the first reply at ADDR.
first_ttl() { k exec pinger -- sed -n 's/.* bytes from .* ttl=\([0-9]*\) .*/\1/p' "/tmp/ping-$1.log" | head -n 1; }

migration_done() {
  local phase
  phase=$(k get vmim "$1" -o jsonpath='{.status.phase}') && { [ "${phase}" = Succeeded ] || [ "${phase}" = Failed ]; }
}
# target_address MIGRATION: the target pod's address, found by the label virt-controller gives the
# pod it creates for a migration (the migration's status names the pod only later, sometimes not
# before it ends: seen 2026-11-29).
target_address() {
  local uid
  uid=$(k get vmim "$1" -o jsonpath='{.metadata.uid}') && [ -n "${uid}" ] &&
    k get pods -l "kubevirt.io/migrationJobUID=${uid}" -o jsonpath='{.items[0].status.podIP}'
}

measure() {
  local i name old new t0 wall last gap longest
  old=$(ip_of_vmi)
  start_ping "${old}"
  sleep 2
  # The guest answers at its address now (wait_guest), so these first replies are the guest's.
  guest_ttl=$(first_ttl "${old}")
  [ -n "${guest_ttl}" ] || { log "no reply from the guest at ${old}"; return 1; }
  for i in $(seq "${count}"); do
    name="guest-$i" t0=${SECONDS}
    k apply -f - >/dev/null <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceMigration
metadata: {name: ${name}}
spec: {vmiName: guest}
YAML
    # The ping at the target pod's address starts only once the migration has ended: a ping started
    # earlier is answered by the target pod's own kernel before its NAT to the guest is in place, and
    # the conntrack entry that makes keeps every later echo of that ping from the NAT, so the guest is
    # never reached (seen 2026-11-29). A new ping process has a new ICMP id and so a new entry.
    until_true 600 migration_done "${name}" || { log "migration ${i} did not end within 600 s"; return 1; }
    if [ "$(k get vmim "${name}" -o jsonpath='{.status.phase}')" != Succeeded ]; then
      log "migration ${i} failed: $(k get vmi guest -o jsonpath='{.status.migrationState.failureReason}')"
      return 1
    fi
    wall=$((SECONDS - t0))
    new=$(target_address "${name}")
    start_ping "${new}"
    until_true 60 has_replies "${new}" || log "migration ${i}: no reply at the new address ${new} within 60 s"
    sleep 2
    stop_ping "${old}"
    # The guest's first reply at the new address after its last at the old one.
    last=$(replies "${old}" | tail -n 1)
    gap=$(replies "${new}" | awk -v a="${last}" '$1 > a { printf "%.3f", $1 - a; exit }')
    longest=$(replies "${old}" | awk '{ if (NR > 1 && $1 - p > m) m = $1 - p; p = $1 } END { printf "%.3f", m }')
    k get vmi guest -o json | jq -r --arg i "${i}" --arg wall "${wall}" --arg gap "${gap}" --arg longest "${longest}" --arg ttl "${guest_ttl}" '
      .status.migrationState |
      "migration \($i): Succeeded, \(.mode), \(.sourceNode) -> \(.targetNode), \(.startTimestamp) to \(.endTimestamp): " +
      "total \((.endTimestamp | fromdate) - (.startTimestamp | fromdate)) s (object to Succeeded \($wall) s); " +
      "guest ttl \($ttl): reply gap old -> new address \($gap) s; longest gap at the old address \($longest) s"'
    old=${new}
  done
  stop_ping "${old}"
}

rc=0
step "namespace ${ns}: VMI from vmbench-vm-disk:${disk_tag}, pinger" setup &&
  step "guest booted, LiveMigratable, answering ping" wait_guest &&
  measure || rc=$?
if [ "${keep}" = 0 ]; then
  step "delete namespace ${ns}" kubectl delete namespace "${ns}" --wait=true >/dev/null || true
fi
exit "${rc}"
