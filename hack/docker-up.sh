#!/usr/bin/env bash
# Makes sure a Docker engine runs: installs docker.io from Debian where dockerd is missing and starts
# dockerd when none answers. Where the process lacks CAP_SYS_RESOURCE (as on these CI machines), the
# engine gets a runc wrapper as its default runtime, so that privileged containers start.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if docker info >/dev/null 2>&1; then
  exit 0
fi
command -v apt-get >/dev/null || command -v dockerd >/dev/null || { log "no dockerd and no apt-get: install Docker yourself"; exit 1; }
step "docker.io and jq" apt_ensure docker.io jq

args=()
if lacks_sys_resource; then
  wrapper=/usr/local/libexec/vmbench/runc
  install -D -m 0755 "${ROOT}/hack/docker/runc-wrapper.sh" "${wrapper}"
  mkdir -p /etc/docker
  if [ ! -f /etc/docker/daemon.json ]; then
    printf '{"runtimes": {"vmbench-runc": {"path": "%s"}}, "default-runtime": "vmbench-runc"}\n' "${wrapper}" > /etc/docker/daemon.json
  elif ! grep -q vmbench-runc /etc/docker/daemon.json; then
    log "/etc/docker/daemon.json exists without the vmbench-runc runtime; privileged containers will fail here"
  fi
  log "CAP_SYS_RESOURCE is missing: dockerd uses ${wrapper}"
fi
log "starting dockerd (log: /var/log/vmbench-dockerd.log)"
nohup dockerd "${args[@]}" > /var/log/vmbench-dockerd.log 2>&1 &
for _ in $(seq 60); do
  docker info >/dev/null 2>&1 && exit 0
  sleep 1
done
log "dockerd did not answer within 60s; see /var/log/vmbench-dockerd.log"
exit 1
