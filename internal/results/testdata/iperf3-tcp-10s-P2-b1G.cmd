command: nice -n 19 iperf3 -c 127.0.0.1 -p 15201 -t 10 -P 2 -b 1G -J (server: nice -n 19 iperf3 -s -1 -p 15201)
version: iperf 3.12 (cJSON 1.7.15) (Debian package iperf3 3.12-1+deb12u2, libiperf0 3.12-1+deb12u2)
date: 2026-11-26T05:19:23Z
host: Linux 6.18.44-fc-v657 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset, while other builds loaded both CPUs
exit_status: 0
