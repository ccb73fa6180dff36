command: netperf -H 127.0.0.1 -p 12869 -t TCP_RR -l 2 -I 95,5 -i 10,3 -- -o THROUGHPUT,THROUGHPUT_UNITS (no netserver on 12869)
version: netperf 2.7.0 (Debian package netperf 2.7.0-0.1, non-free)
date: 2026-11-25T05:48:00Z
host: Linux 6.18.44-fc-v782 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset (netserver -p 12865 on the same host, loopback)
exit_status: 255
