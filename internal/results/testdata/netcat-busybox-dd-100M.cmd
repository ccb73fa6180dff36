command: sh -c 'LC_ALL=C busybox dd if=/dev/zero bs=1M count=100 | nc -N -v 127.0.0.1 12877' 2>&1
version: BusyBox v1.35.0 dd (Debian package busybox 1:1.35.0-4+deb12u1+b1, built without FEATURE_DD_THIRD_STATUS_LINE: no bytes/seconds summary), OpenBSD netcat (Debian patchlevel 1.219-1)
date: 2026-11-27T08:52:11Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 (receiver: nc -l 127.0.0.1 12877 > /dev/null, same host)
exit_status: 0
