command: sh -c 'LC_ALL=C dd if=/dev/zero bs=1k count=1 | nc -N -v 127.0.0.1 12866' 2>&1
version: dd (coreutils) 9.1, OpenBSD netcat (Debian patchlevel 1.219-1)
date: 2026-11-25T05:48:00Z
host: Linux 6.18.44-fc-v782 x86_64, nproc=2, LANG=C.UTF-8 (receiver: nc -l 127.0.0.1 12866 > /dev/null, same host)
exit_status: 0
