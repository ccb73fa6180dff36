command: busybox ping -c 3 127.0.0.1
version: BusyBox v1.35.0 ping (Debian package busybox 1:1.35.0-4+deb12u1+b1)
date: 2026-11-27T08:52:02Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset
exit_status: 0
