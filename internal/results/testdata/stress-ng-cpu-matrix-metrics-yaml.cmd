command: nice -n 19 stress-ng --cpu 1 --matrix 1 -t 2s --metrics --yaml /tmp/cap/sng-misc.yaml   (stdout+stderr into stress-ng-cpu-matrix-metrics-yaml.txt; the YAML file, with the matrix stressor's extra *-matrix-ops-per-sec keys, renamed to stress-ng-cpu-matrix-metrics-yaml.yaml)
version: stress-ng 0.15.06 (Debian package stress-ng 0.15.06-2)
date: 2026-11-27T09:12:28Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset
exit_status: 0
