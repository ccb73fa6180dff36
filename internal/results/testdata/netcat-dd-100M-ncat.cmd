command: sh -c 'LC_ALL=C dd if=/dev/zero bs=1M count=100 | ncat -v --send-only 127.0.0.1 12879' 2>&1
version: dd (coreutils) 9.1, Ncat 7.93 (Debian package ncat 7.93+dfsg1-1)
date: 2026-11-27T08:52:33Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 (receiver: nc -l 127.0.0.1 12879 > /dev/null, OpenBSD netcat 1.219-1, same host)
exit_status: 0
