command: nice -n 19 sysbench cpu --threads=1 --time=1 --percentile=0 run
version: sysbench 1.0.20 (Debian package sysbench 1.0.20+ds-5)
date: 2026-11-27T09:12:16Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset
exit_status: 0
