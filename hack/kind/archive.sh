#!/usr/bin/env bash
# The S3-compatible server that the kind e2e archives its suites to (the chart's archive.s3,
# docs/archive.md): SeaweedFS, run as the envtests run it (internal/archive/archivetest): one
# `weed server` process with master, volume server, filer and S3 gateway, the identities admin and
# archive in its S3 config, whose signatures it checks, and no bucket made on upload. Its image
# (hack/images/seaweedfs.sh, built from the Go module proxy) goes to the registry beside the cluster
# under a tag derived from its content, as vmbench's own images do. In the cluster:
#   namespace vmbench-archive   Secret seaweedfs-s3 (the S3 config), Deployment and Service seaweedfs:
#                               the S3 API on port 8333, the filer's HTTP API on 8888 (the e2e reads
#                               the archive back through it, via the API server's service proxy)
#   namespace vmbench-system    Secret vmbench-archive: the archive identity's keys, for the manager
# and the bucket vmbench-results, made by the admin identity's owner with `weed shell` in the pod.
# The data lives in an emptyDir: a new pod starts empty, and running this script again makes the
# bucket again. Prints, on stdout, the helm arguments that point the chart at it; hack/install.sh
# passes them when VMBENCH_E2E_ARCHIVE is set (make test-e2e), so that `make demo` has no archive.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

export KUBECONFIG="${KUBECONFIG:-${BIN}/kind/${CLUSTER_NAME}.kubeconfig}"
kubectl=$(kind_kubectl)
local_image=${SEAWEEDFS_IMAGE:-vmbench/seaweedfs:dev}
archive_ns=${ARCHIVE_NAMESPACE:-vmbench-archive}
vmbench_ns=${VMBENCH_NAMESPACE:-vmbench-system}
bucket=vmbench-results
prefix=e2e
credentials_secret=vmbench-archive
# The identities of internal/archive/archivetest: the admin makes the bucket, the archive reads,
# lists and writes.
admin_key=vmbench-admin
archive_key=vmbench-archive
archive_secret=archive-secret-0123456789
s3_config='{"identities":[{"name":"admin","credentials":[{"accessKey":"vmbench-admin","secretKey":"admin-secret-0123456789"}],"actions":["Admin","Read","List","Write"]},{"name":"archive","credentials":[{"accessKey":"vmbench-archive","secretKey":"archive-secret-0123456789"}],"actions":["Read","List","Write"]}]}'

"${ROOT}/hack/images/seaweedfs.sh" >&2
tag=$(docker image inspect -f '{{.Id}}' "${local_image}" | cut -c8-19)
image="${LOCAL_REGISTRY}/vmbench-seaweedfs:${tag}"

# push: the registry up and known to the nodes, the image pushed under its content tag (a push of
# an unchanged image sends no layer). registry.sh prune keeps only vmbench's own tag in the
# repositories that have it, so this repository keeps its tags.
push() {
  local out
  "${here}/registry.sh" >&2 && "${here}/registry.sh" nodes >&2 || return
  docker tag "${local_image}" "${image}" &&
    { out=$(docker push "${image}" 2>&1) || { printf '%s\n' "${out}" >&2; docker rmi "${image}" >/dev/null; return 1; }; } &&
    docker rmi "${image}" >/dev/null
}

manifests() {
  cat <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: ${archive_ns}
---
apiVersion: v1
kind: Namespace
metadata:
  name: ${vmbench_ns}
---
apiVersion: v1
kind: Secret
metadata:
  name: seaweedfs-s3
  namespace: ${archive_ns}
stringData:
  s3.json: '${s3_config}'
---
apiVersion: v1
kind: Secret
metadata:
  name: ${credentials_secret}
  namespace: ${vmbench_ns}
stringData:
  AWS_ACCESS_KEY_ID: ${archive_key}
  AWS_SECRET_ACCESS_KEY: ${archive_secret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: seaweedfs
  namespace: ${archive_ns}
  labels: {app.kubernetes.io/name: seaweedfs}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector:
    matchLabels: {app.kubernetes.io/name: seaweedfs}
  template:
    metadata:
      labels: {app.kubernetes.io/name: seaweedfs}
      annotations:
        # A changed S3 config restarts the pod (the image has a tag of its own).
        vmbench.io/config-hash: "$(printf '%s' "${s3_config}" | sha256sum | cut -c1-16)"
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: weed
          image: ${image}
          imagePullPolicy: IfNotPresent
          # The envtests' flags (internal/archive/archivetest) on the default ports; -ip is what
          # the master tells the filer about the volume server, all in this pod.
          args:
            - -logtostderr=true
            - server
            - -dir=/data
            - -ip=127.0.0.1
            - -ip.bind=0.0.0.0
            - -filer
            - -s3
            - -s3.port=8333
            - -s3.port.iceberg=0
            - -s3.port.lance=0
            - -s3.config=/etc/seaweedfs/s3.json
            - -s3.autoCreateBucket=false
            - -master.telemetry=false
            - -master.volumeSizeLimitMB=64
            - -volume.max=0
          ports:
            - {name: s3, containerPort: 8333}
            - {name: filer, containerPort: 8888}
          readinessProbe:
            httpGet: {path: /healthz, port: s3}
            periodSeconds: 2
          resources:
            requests: {cpu: 50m, memory: 128Mi}
            limits: {cpu: "1", memory: 1Gi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: ["ALL"]}
          volumeMounts:
            - {name: config, mountPath: /etc/seaweedfs, readOnly: true}
            - {name: data, mountPath: /data}
            - {name: tmp, mountPath: /tmp}
      volumes:
        - name: config
          secret: {secretName: seaweedfs-s3}
        - name: data
          emptyDir: {sizeLimit: 2Gi}
        - name: tmp
          emptyDir: {sizeLimit: 64Mi}
---
apiVersion: v1
kind: Service
metadata:
  name: seaweedfs
  namespace: ${archive_ns}
  labels: {app.kubernetes.io/name: seaweedfs}
spec:
  selector: {app.kubernetes.io/name: seaweedfs}
  ports:
    - {name: s3, port: 8333, targetPort: s3}
    - {name: filer, port: 8888, targetPort: filer}
EOF
}

deploy() {
  manifests | "${kubectl}" apply --server-side --force-conflicts --field-manager=vmbench-install -f - >/dev/null &&
    "${kubectl}" -n "${archive_ns}" rollout status deployment/seaweedfs --timeout=300s >&2
}

# weed_shell: `weed shell` in the server's pod, its commands on stdin.
weed_shell() { "${kubectl}" -n "${archive_ns}" exec -i deployment/seaweedfs -c weed -- /usr/bin/weed shell -master=127.0.0.1:9333; }

# make_bucket: the bucket, owned by the admin identity, unless it is there; the filer joins the
# master some seconds after the pod is ready, so it is tried for a minute.
make_bucket() {
  local deadline=$((SECONDS + 60)) out
  while :; do
    if out=$(weed_shell <<<"s3.bucket.list" 2>&1); then
      grep -q "^[[:space:]]*${bucket}[[:space:]]" <<<"${out}" && return 0
      out=$(weed_shell <<<"s3.bucket.create -name ${bucket} -owner admin" 2>&1) && return 0
    fi
    if [ "${SECONDS}" -ge "${deadline}" ]; then
      log "SeaweedFS in ${archive_ns} did not make the bucket ${bucket} in a minute: ${out}"
      "${kubectl}" -n "${archive_ns}" logs deployment/seaweedfs --tail=40 >&2 || true
      return 1
    fi
    sleep 2
  done
}

with_lock registry-push step "push ${image}" push
step "SeaweedFS in ${archive_ns} (S3 API seaweedfs.${archive_ns}.svc:8333, identities ${admin_key} and ${archive_key})" deploy
step "bucket ${bucket}" make_bucket
echo "--set archive.s3.endpoint=http://seaweedfs.${archive_ns}.svc:8333 --set archive.s3.bucket=${bucket}" \
  "--set archive.s3.prefix=${prefix} --set archive.s3.credentialsSecret=${credentials_secret}"
