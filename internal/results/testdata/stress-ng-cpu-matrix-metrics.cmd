command: nice -n 19 stress-ng --cpu 1 --cpu-method matrixprod --matrix 1 -t 2s --metrics   (stdout+stderr; --metrics adds the "miscellaneous metrics" lines of the matrix stressor after the table)
version: stress-ng 0.15.06 (Debian package stress-ng 0.15.06-2)
date: 2026-11-27T09:12:22Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset
exit_status: 0
