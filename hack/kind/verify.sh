#!/usr/bin/env bash
# Checks that the kind cluster `vmbench` works as the e2e suite needs: all nodes Ready; a locally built
# image loaded with `kind load docker-image`; pods on the two workers reach each other by IP; Service
# DNS resolves; a local-path PVC written by one pod is read by another; a ReadWriteMany PVC of the
# class vmbench-shared written by a pod on one worker is read by a pod on the other. Everything runs
# in the namespace vmbench-verify, which is deleted at the end. Exit code 0 only if every check passed.
# Usage: hack/kind/verify.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

ns=vmbench-verify
image=vmbench/kind-smoke:v1
k=("$(kind_kubectl)" --kubeconfig "${BIN}/kind/${CLUSTER_NAME}.kubeconfig")
worker1="${CLUSTER_NAME}-worker" worker2="${CLUSTER_NAME}-worker2"

smoke_image() {
  local ctx="${BIN}/.build/kind-smoke"
  "${ROOT}/hack/images/debian-base.sh" || return
  mkdir -p "${ctx}" && printf '%s\n' "FROM vmbench/debian:bookworm" \
    "RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends iputils-ping >/dev/null && rm -rf /var/lib/apt/lists/*" \
    > "${ctx}/Dockerfile" || return
  image_exists "${image}" || DOCKER_BUILDKIT=0 docker build -t "${image}" "${ctx}" >"${ctx}/build.log" 2>&1 ||
    { tail -n 20 "${ctx}/build.log" >&2; return 1; }
  kind_load "${image}"
}

# pod NAME NODE [COMMAND]: a pod of the smoke image pinned to NODE.
pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: ${ns}, labels: {app: $1}}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${image}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "${3:-sleep 600}"]
YAML
}

apply() { "${k[@]}" apply --server-side --field-manager=vmbench-verify -f -; }

nodes_ready() { "${k[@]}" get nodes -o wide && "${k[@]}" wait --for=condition=Ready nodes --all --timeout=60s; }

pod_to_pod() {
  { pod ping-a "${worker1}"; echo ---; pod ping-b "${worker2}"; } | apply || return
  "${k[@]}" -n "${ns}" wait --for=condition=Ready pod/ping-a pod/ping-b --timeout=120s || return
  local ip_a ip_b
  ip_a=$("${k[@]}" -n "${ns}" get pod ping-a -o jsonpath='{.status.podIP}')
  ip_b=$("${k[@]}" -n "${ns}" get pod ping-b -o jsonpath='{.status.podIP}')
  "${k[@]}" -n "${ns}" get pods -o wide
  "${k[@]}" -n "${ns}" exec ping-a -- ping -c 3 -W 2 "${ip_b}" &&
    "${k[@]}" -n "${ns}" exec ping-b -- ping -c 3 -W 2 "${ip_a}"
}

service_dns() {
  "${k[@]}" -n "${ns}" create service clusterip ping-b --tcp=80:80 --dry-run=client -o yaml | apply || return
  "${k[@]}" -n "${ns}" exec ping-a -- getent hosts kubernetes.default.svc.cluster.local &&
    "${k[@]}" -n "${ns}" exec ping-a -- getent hosts "ping-b.${ns}.svc.cluster.local" &&
    "${k[@]}" -n "${ns}" get svc ping-b
}

# data_pod NAME COMMAND [NODE] [CLAIM]: a pod on NODE (the first worker) with the PVC CLAIM (data)
# at /data.
data_pod() {
  pod "$1" "${3:-${worker1}}" "$2" |
    sed -e '/^  containers:/i\  volumes: [{name: data, persistentVolumeClaim: {claimName: '"${4:-data}"'}}]' \
      -e '$a\    volumeMounts: [{name: data, mountPath: /data}]'
}

pvc() {
  printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" "metadata: {name: data, namespace: ${ns}}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Mi}}}" | apply || return
  data_pod writer 'echo written-by-$(hostname) > /data/probe' | apply &&
    "${k[@]}" -n "${ns}" wait --for=jsonpath='{.status.phase}'=Succeeded pod/writer --timeout=180s || return
  data_pod reader 'cat /data/probe' | apply &&
    "${k[@]}" -n "${ns}" wait --for=jsonpath='{.status.phase}'=Succeeded pod/reader --timeout=120s || return
  "${k[@]}" -n "${ns}" get pvc data && "${k[@]}" -n "${ns}" logs reader | grep -x written-by-writer
}

# shared_rwx: the class of the Shared storage target (cluster-up.sh, shared-storage.yaml): one
# ReadWriteMany claim, written on the first worker, read on the second. The writer runs as the
# runner pods do, uid 1000 without root, so the volume's directory must let it write.
shared_rwx() {
  "${k[@]}" get storageclass vmbench-shared || return
  printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" "metadata: {name: shared, namespace: ${ns}}" \
    "spec: {accessModes: [ReadWriteMany], storageClassName: vmbench-shared, resources: {requests: {storage: 16Mi}}}" | apply || return
  "${k[@]}" -n "${ns}" wait --for=jsonpath='{.status.phase}'=Bound pvc/shared --timeout=120s || return
  data_pod shared-writer 'echo written-on-$(hostname) > /data/probe' "${worker1}" shared |
    sed -e '/^  restartPolicy:/a\  securityContext: {runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true}' | apply &&
    "${k[@]}" -n "${ns}" wait --for=jsonpath='{.status.phase}'=Succeeded pod/shared-writer --timeout=180s || return
  data_pod shared-reader 'cat /data/probe' "${worker2}" shared | apply &&
    "${k[@]}" -n "${ns}" wait --for=jsonpath='{.status.phase}'=Succeeded pod/shared-reader --timeout=120s || return
  "${k[@]}" -n "${ns}" get pvc shared -o wide && "${k[@]}" -n "${ns}" get pods shared-writer shared-reader -o wide &&
    "${k[@]}" -n "${ns}" logs shared-reader | grep -x written-on-shared-writer
}

# A previous run's namespace may still be terminating.
"${k[@]}" wait --for=delete "namespace/${ns}" --timeout=120s >/dev/null 2>&1 || true
"${k[@]}" create namespace "${ns}" --dry-run=client -o yaml | apply >/dev/null
trap '"${k[@]}" delete namespace "${ns}" --timeout=120s >/dev/null 2>&1 || true' EXIT
failed=0
for check in nodes_ready smoke_image pod_to_pod service_dns pvc shared_rwx; do
  step "verify: ${check}" "${check}" || failed=$((failed + 1))
done
[ "${failed}" = 0 ] && log "all checks passed" || { log "${failed} check(s) failed"; exit 1; }
