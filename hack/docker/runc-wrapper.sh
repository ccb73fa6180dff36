#!/bin/sh
# A runc that drops CAP_SYS_RESOURCE from every container and exec process before calling the real
# runc. Installed only where the machine's bounding set lacks that capability: there, every
# privileged container (kind nodes, kube-proxy) fails with "unable to apply caps: operation not
# permitted". On normal machines it is never installed.
real=${VMBENCH_REAL_RUNC:-/usr/sbin/runc}
bundle=
process=
prev=
for arg in "$@"; do
  case "$prev" in
    --bundle|-b) bundle=$arg ;;
    --process|-p) process=$arg ;;
  esac
  case "$arg" in
    --bundle=*) bundle=${arg#--bundle=} ;;
    --process=*) process=${arg#--process=} ;;
  esac
  prev=$arg
done
strip() {
  [ -f "$1" ] || return 0
  jq 'walk(if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end)' "$1" > "$1.vmbench" &&
    mv "$1.vmbench" "$1"
}
[ -n "$bundle" ] && strip "$bundle/config.json"
[ -n "$process" ] && strip "$process"
exec "$real" "$@"
