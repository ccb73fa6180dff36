#!/usr/bin/env bash
# Runs a real Prometheus in the kind cluster (namespace vmbench-monitoring) that scrapes vmbench's
# metrics every 5 s: the image from Debian's package (hack/images/prometheus.sh), loaded into the
# nodes, a ConfigMap with prometheus.yml, a Deployment and a Service on port 9090. Query it through
# the API server: /api/v1/namespaces/vmbench-monitoring/services/prometheus:9090/proxy/api/v1/query.
#
# Debian builds Prometheus without Kubernetes service discovery, so the targets come from the cluster
# DNS instead: the SRV records of the headless metrics Service, one per ready manager pod. Prometheus
# needs no RBAC for that.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "${here}/../lib.sh"
source "${here}/env.sh"

export KUBECONFIG="${KUBECONFIG:-${BIN}/kind/${CLUSTER_NAME}.kubeconfig}"
kubectl=$(kind_kubectl)
image=${PROMETHEUS_IMAGE:-vmbench/prometheus:dev}
monitoring_ns=${PROMETHEUS_NAMESPACE:-vmbench-monitoring}
# Where hack/install.sh puts vmbench (helm release vmbench: Service vmbench-metrics).
vmbench_ns=${VMBENCH_NAMESPACE:-vmbench-system}
metrics_service=${VMBENCH_METRICS_SERVICE:-vmbench-metrics}
cluster_domain=${CLUSTER_DOMAIN:-cluster.local}
scrape_interval=${PROMETHEUS_SCRAPE_INTERVAL:-5s}

"${ROOT}/hack/images/prometheus.sh"
step "load ${image} into the nodes" kind_load "${image}"

config() {
  cat <<EOF
global:
  scrape_interval: ${scrape_interval}
  scrape_timeout: ${scrape_interval}
  evaluation_interval: ${scrape_interval}
scrape_configs:
  - job_name: vmbench
    # vmbench's result series carry the suite's namespace as label "namespace": keep it.
    honor_labels: true
    dns_sd_configs:
      - names: ["_metrics._tcp.${metrics_service}.${vmbench_ns}.svc.${cluster_domain}"]
        type: SRV
        refresh_interval: ${scrape_interval}
  - job_name: prometheus
    static_configs:
      - targets: ["localhost:9090"]
EOF
}

manifests() {
  local config_hash image_id
  config_hash=$(config | sha256sum | cut -c1-16)
  # The tag stays "dev": a changed image or configuration restarts the pod.
  image_id=$(docker image inspect -f '{{.Id}}' "${image}" | cut -c8-23)
  cat <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: ${monitoring_ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: prometheus-config
  namespace: ${monitoring_ns}
data:
  prometheus.yml: |
$(config | sed 's/^/    /')
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prometheus
  namespace: ${monitoring_ns}
  labels: {app.kubernetes.io/name: prometheus}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector:
    matchLabels: {app.kubernetes.io/name: prometheus}
  template:
    metadata:
      labels: {app.kubernetes.io/name: prometheus}
      annotations:
        vmbench.io/config-hash: "${config_hash}"
        vmbench.io/image-id: "${image_id}"
    spec:
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        runAsGroup: 65534
        fsGroup: 65534
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: prometheus
          image: ${image}
          imagePullPolicy: IfNotPresent
          args:
            - --config.file=/etc/prometheus/prometheus.yml
            - --storage.tsdb.path=/prometheus
            - --storage.tsdb.retention.time=2d
            - --web.listen-address=:9090
          ports:
            - {name: web, containerPort: 9090}
          readinessProbe:
            httpGet: {path: /-/ready, port: web}
            periodSeconds: 5
          livenessProbe:
            httpGet: {path: /-/healthy, port: web}
            initialDelaySeconds: 30
            periodSeconds: 15
          resources:
            requests: {cpu: 50m, memory: 128Mi}
            limits: {cpu: 500m, memory: 512Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: ["ALL"]}
          volumeMounts:
            - {name: config, mountPath: /etc/prometheus, readOnly: true}
            - {name: data, mountPath: /prometheus}
      volumes:
        - name: config
          configMap: {name: prometheus-config}
        - name: data
          emptyDir: {sizeLimit: 1Gi}
---
apiVersion: v1
kind: Service
metadata:
  name: prometheus
  namespace: ${monitoring_ns}
  labels: {app.kubernetes.io/name: prometheus}
spec:
  selector: {app.kubernetes.io/name: prometheus}
  ports:
    - {name: web, port: 9090, targetPort: web}
EOF
}

deploy() {
  manifests | "${kubectl}" apply --server-side --force-conflicts --field-manager=vmbench-install -f - >/dev/null &&
    "${kubectl}" -n "${monitoring_ns}" rollout status deployment/prometheus --timeout=300s
}

step "Prometheus in ${monitoring_ns} (scrapes ${metrics_service}.${vmbench_ns} every ${scrape_interval})" deploy
