command: ping -c 3 127.0.0.1
version: ping (GNU inetutils) 2.4 (Debian package inetutils-ping 2:2.4-2+deb12u3)
date: 2026-11-27T08:52:02Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset
exit_status: 0
