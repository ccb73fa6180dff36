command: sh -c 'LC_ALL=C dd if=/dev/zero bs=1M count=100 | busybox nc -N -v 127.0.0.1 12881' 2>&1
version: dd (coreutils) 9.1, BusyBox v1.35.0 nc (Debian package busybox 1:1.35.0-4+deb12u1+b1), which has neither -N nor -v: dd ends on SIGPIPE without a summary
date: 2026-11-27T09:06:35Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 (receiver: nc -l 127.0.0.1 12881 > /dev/null, OpenBSD netcat 1.219-1, same host)
exit_status: 1
