command: sh -c 'LC_ALL=C dd if=/dev/zero bs=1M count=100 | nc.traditional -N -v 127.0.0.1 12881' 2>&1
version: dd (coreutils) 9.1, netcat-traditional v1.10-47 (Debian package netcat-traditional 1.10-47), which has no -N: dd ends on SIGPIPE without a summary
date: 2026-11-27T09:06:35Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 (receiver: nc -l 127.0.0.1 12881 > /dev/null, OpenBSD netcat 1.219-1, same host)
exit_status: 1
