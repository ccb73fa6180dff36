command: nice -n 19 iozone -a -n 64k -g 4m -i 0 -i 1 -i 2 -I -e -R -f /tmp/iozfix/iozone.tmp
version: iozone 3.489 (Debian package iozone3 489-1, non-free)
date: 2026-11-26T04:59:48Z
host: Linux 6.18.44-fc-v657 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset, file system ext4 (O_DIRECT accepted)
exit_status: 0
