command: nice -n 19 fio --name=mixed --rw=randrw --bs=4k --size=16M --runtime=1 --time_based --numjobs=2 --ioengine=psync --directory=/tmp/fiow --output-format=json+   (two jobs named mixed, no --group_reporting)
version: fio-3.33 (Debian package fio 3.33-3)
date: 2026-11-27T09:13:42Z
host: Linux 6.18.44-fc-v669 x86_64, nproc=2, LANG=C.UTF-8 LC_ALL=unset, file system ext4
exit_status: 0
