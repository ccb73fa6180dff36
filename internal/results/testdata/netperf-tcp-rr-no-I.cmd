command: netperf -H 127.0.0.1 -p 12865 -t TCP_RR -l 2 -- -o THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID
version: netperf 2.7.0 (Debian package netperf 2.7.0-0.1, non-free)
date: 2026-11-25T05:48:00Z
host: Linux 6.18.44-fc-v782 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset (netserver -p 12865 on the same host, loopback)
exit_status: 0
