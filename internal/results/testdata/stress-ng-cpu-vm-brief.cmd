command: nice -n 19 stress-ng --cpu 1 --vm 1 --vm-bytes 64M -t 2s --metrics-brief   (stdout+stderr)
version: stress-ng 0.15.06 (Debian package stress-ng 0.15.06-2)
date: 2026-11-27T09:12:20Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset
exit_status: 0
